import { CapabilityError, ConfigurationError } from '@babelqueue/core';

/**
 * The recommended retry tiers in milliseconds (5 s, 30 s, 5 min, 30 min).
 * Tiers are opt-in: pass them (or your own) as `retryTiersMs`.
 */
export const DEFAULT_RETRY_TIERS_MS: readonly number[] = Object.freeze([5_000, 30_000, 300_000, 1_800_000]);

/** Checks a tier list: positive integer milliseconds in ascending order. Returns a frozen copy. */
export function validateRetryTiers(tiers: readonly number[]): readonly number[] {
  if (!Array.isArray(tiers)) throw new ConfigurationError('retryTiersMs must be an array of milliseconds');
  tiers.forEach((ms, i) => {
    if (!Number.isInteger(ms) || ms <= 0) {
      throw new ConfigurationError(`retryTiersMs[${i}] must be a positive integer of milliseconds, got ${String(ms)}`);
    }
    const previous = tiers[i - 1];
    if (previous !== undefined && ms <= previous) {
      throw new ConfigurationError(`retryTiersMs must be strictly ascending (tier ${i + 1} is ${ms} after ${previous})`);
    }
  });
  return Object.freeze([...tiers]);
}

/** A retry-tier topic: `<topic>.retry.<n>`, n the 1-based tier index. */
export interface RetryTier {
  readonly index: number;
  readonly delayMs: number;
  readonly topic: string;
}

/** `<topic>.retry.<n>` (n starts at 1). */
export function retryTopicName(topic: string, index: number): string {
  return `${topic}.retry.${index}`;
}

/** Every tier topic of a work topic, in tier order. */
export function retryTiersOf(topic: string, tiers: readonly number[]): RetryTier[] {
  return tiers.map((delayMs, i) => ({ index: i + 1, delayMs, topic: retryTopicName(topic, i + 1) }));
}

/**
 * Tier of a retry republish (rule 1 of two; never merge them): tier n =
 * min(attempts_before + 1, tier count), so the first retry goes to tier 1, the
 * second to tier 2, and the last tier repeats. `attempts` is the new count the
 * record carries (attempts_before + 1).
 */
export function tierForRetry(topic: string, tiers: readonly number[], attempts: number): RetryTier {
  if (tiers.length === 0) throw new CapabilityError('no retry tiers are configured (set retryTiersMs)');
  const index = Math.min(Math.max(1, Math.floor(attempts)), tiers.length);
  return { index, delayMs: tiers[index - 1]!, topic: retryTopicName(topic, index) };
}

/**
 * Tier of a delay (rule 2 of two; never merge them): the smallest tier whose
 * delay is at least the requested delay. A delay above the largest tier, or no
 * tiers at all, is refused with the reason.
 */
export function tierForDelay(topic: string, tiers: readonly number[], delayMs: number): RetryTier {
  if (tiers.length === 0) {
    throw new CapabilityError(
      `Kafka has no delayed delivery: a delay of ${delayMs} ms needs retry tiers (set retryTiersMs, e.g. DEFAULT_RETRY_TIERS_MS)`,
    );
  }
  const i = tiers.findIndex((ms) => ms >= delayMs);
  if (i < 0) {
    throw new CapabilityError(
      `a delay of ${delayMs} ms exceeds the largest retry tier (${tiers[tiers.length - 1]} ms); add a larger tier`,
    );
  }
  return { index: i + 1, delayMs: tiers[i]!, topic: retryTopicName(topic, i + 1) };
}

/** The work topic and tier index of a `<topic>.retry.<n>` name, or undefined for any other name. */
export function parseRetryTopic(name: string): { topic: string; index: number } | undefined {
  const m = /^(.+)\.retry\.([1-9][0-9]*)$/.exec(name);
  return m ? { topic: m[1]!, index: Number(m[2]) } : undefined;
}
