/**
 * Back-off between attempts of a failing broker connection or call (a
 * reconnect, a failed receive, a start-up step): the delay before attempt n
 * (1-based) is `min(maxDelayMs, initialDelayMs × multiplier^(n−1))`.
 *
 * Not the message retry back-off (`RetryBackoff`, `retry/backoff.ts`),
 * which delays the redelivery of a message whose handler failed.
 */
export interface ReconnectBackoff {
  /** The delay before the first attempt that follows a failure. Default 100 ms. */
  readonly initialDelayMs?: number;
  /** The cap of the delay. Default 5000 ms. */
  readonly maxDelayMs?: number;
  /** The growth from one attempt to the next. Default 2. */
  readonly multiplier?: number;
}

/** A {@link ReconnectBackoff} with every field filled in. */
export type ResolvedReconnectBackoff = Readonly<Required<ReconnectBackoff>>;

/** The defaults of a binding's `reconnect` option: 100 ms, doubling, at most 5 s. */
export const DEFAULT_RECONNECT_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2 });

/** Fills in the defaults; the binding checks the values (its error names its own option). */
export function resolveReconnectBackoff(options: ReconnectBackoff = {}): ResolvedReconnectBackoff {
  return {
    initialDelayMs: options.initialDelayMs ?? DEFAULT_RECONNECT_BACKOFF.initialDelayMs,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_RECONNECT_BACKOFF.maxDelayMs,
    multiplier: options.multiplier ?? DEFAULT_RECONNECT_BACKOFF.multiplier,
  };
}

/**
 * The delay before attempt `attempt` (1-based; 0 and below count as 1), not
 * rounded: `min(maxDelayMs, initialDelayMs × multiplier^(attempt−1))`. A
 * growth past what a number holds gives `maxDelayMs`.
 */
export function reconnectDelayMs(backoff: ResolvedReconnectBackoff, attempt: number): number {
  return Math.min(backoff.maxDelayMs, backoff.initialDelayMs * backoff.multiplier ** Math.max(0, attempt - 1));
}
