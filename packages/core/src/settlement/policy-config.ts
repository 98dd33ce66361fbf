import type { UnknownUrnStrategyValue } from './unknown-urn-strategy.js';

/** Retry backoff in milliseconds: `d(n) = min(maxMs, baseMs * multiplier^(n-1))` for delivery n. */
export interface RetryBackoff {
  readonly baseMs: number;
  readonly multiplier: number;
  readonly maxMs: number;
}

/** The consume configuration the settlement policy reads. */
export interface PolicyConfig {
  /** Total deliveries a message gets, the first included; 1 = no retry; 0 = no cap. */
  readonly maxAttempts: number;
  /** The configured unknown-URN strategy. */
  readonly onUnknownUrn: UnknownUrnStrategyValue;
  /** The DLQ name when dead-lettering is on; undefined when it is off. */
  readonly deadLetterQueue: string | undefined;
  /** The DLQ name a binding falls back to for poison when dead-lettering is off (`<queue>.dlq`). */
  readonly defaultDeadLetterQueue: string;
  readonly retryBackoff: RetryBackoff;
  /** Delay before an unknown URN under the `release` strategy is delivered again. */
  readonly unknownUrnReleaseDelayMs: number;
}
