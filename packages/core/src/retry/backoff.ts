import type { RetryBackoff } from '../settlement/policy-config.js';

/** The defaults keep the documented behaviour: every retry is immediate, `d(n) = 0`. */
export const DEFAULT_RETRY_BACKOFF: RetryBackoff = Object.freeze({ baseMs: 0, multiplier: 1, maxMs: Infinity });

/**
 * Fills in the defaults and checks the values: `baseMs` and `maxMs` are
 * non-negative (maxMs may be Infinity), `multiplier` is finite and >= 0.
 * Throws `RangeError` naming the bad field.
 */
export function resolveRetryBackoff(options: Partial<RetryBackoff> = {}): RetryBackoff {
  const backoff = { ...DEFAULT_RETRY_BACKOFF, ...stripUndefined(options) };
  if (!Number.isFinite(backoff.baseMs) || backoff.baseMs < 0) {
    throw new RangeError(`retryBackoff.baseMs must be a finite number >= 0, got ${backoff.baseMs}`);
  }
  if (!Number.isFinite(backoff.multiplier) || backoff.multiplier < 0) {
    throw new RangeError(`retryBackoff.multiplier must be a finite number >= 0, got ${backoff.multiplier}`);
  }
  if (Number.isNaN(backoff.maxMs) || backoff.maxMs < 0) {
    throw new RangeError(`retryBackoff.maxMs must be a number >= 0 (Infinity allowed), got ${backoff.maxMs}`);
  }
  return Object.freeze(backoff);
}

/**
 * `d(n)` for delivery `deliveryNumber` (n = attempts + 1; values below 1 count
 * as 1), rounded to whole milliseconds, never negative; a result too large
 * for a number saturates at `Number.MAX_SAFE_INTEGER`.
 */
export function retryDelayMs(deliveryNumber: number, backoff: RetryBackoff = DEFAULT_RETRY_BACKOFF): number {
  if (backoff.baseMs <= 0 || backoff.maxMs <= 0) return 0;
  const n = Number.isFinite(deliveryNumber) ? Math.max(1, Math.floor(deliveryNumber)) : 1;
  const delay = Math.min(backoff.maxMs, backoff.baseMs * Math.pow(backoff.multiplier, n - 1));
  return Number.isFinite(delay) ? Math.round(delay) : Number.MAX_SAFE_INTEGER;
}

function stripUndefined(options: Partial<RetryBackoff>): Partial<RetryBackoff> {
  const out: { -readonly [K in keyof RetryBackoff]?: number } = {};
  if (options.baseMs !== undefined) out.baseMs = options.baseMs;
  if (options.multiplier !== undefined) out.multiplier = options.multiplier;
  if (options.maxMs !== undefined) out.maxMs = options.maxMs;
  return out;
}
