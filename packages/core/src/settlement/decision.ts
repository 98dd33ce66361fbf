/** Why a record goes to the dead-letter queue (the `dead_letter.reason` values). */
export type DeadLetterReason = 'failed' | 'unknown_urn' | 'poison';

/**
 * Which rule a `retry` follows (seed 000, Kafka retry topics: "Retry and delay
 * pick a tier by two different rules. Do not merge them."):
 * - `retry`: a failed delivery is delivered again (a failing handler, fail or a
 *   zero-delay release of an unknown URN, poison on the bounded retry); Kafka
 *   picks the tier of the attempt.
 * - `delay`: a release that asked for a delay (an unknown URN under `release`
 *   with a release delay); Kafka picks the smallest tier covering `delayMs`.
 * Bindings with native delays honour `delayMs` either way.
 */
export type RetryRule = 'retry' | 'delay';

/**
 * The one thing a transport is told to do with a delivery. Produced by the
 * settlement policy; executed by the transport atomically where it can.
 */
export type Decision =
  /** Handled: remove it from the broker. */
  | { readonly kind: 'ack' }
  /**
   * Deliver again after `delayMs`, with the body's `attempts` (and the native
   * attempts projection) set to `attempts`. How is the binding's business:
   * re-publish then ack, release to a delayed set, a retry-tier topic, …
   * `rule` says whether it is a retry or a delay ({@link RetryRule}).
   */
  | { readonly kind: 'retry'; readonly delayMs: number; readonly attempts: number; readonly rule: RetryRule }
  /**
   * Write `record` to `queue`, then ack. `raw` marks a version-gated record (the
   * original bytes, no dead_letter block).
   */
  | {
      readonly kind: 'dead-letter';
      readonly queue: string;
      readonly record: Buffer;
      readonly reason: DeadLetterReason | 'version_gate';
    }
  /** Ack without a record; the runtime has logged why. */
  | { readonly kind: 'drop'; readonly why: string }
  /**
   * Do nothing: leave the delivery reserved/unacknowledged so the broker (or the
   * binding's recovery) delivers it again. Used after a failed dead-letter write.
   */
  | { readonly kind: 'unsettled'; readonly why: string }
  /** Leave it to the broker's own dead-letter mechanism (SQS RedrivePolicy, ASB $DeadLetterQueue). */
  | { readonly kind: 'native-dead-letter'; readonly why: string };

export type DecisionKind = Decision['kind'];
