import type { DeadLetterReason, RetryRule } from './decision.js';

/**
 * The settlement policy's answer, before the runtime has built any record
 * bytes. `dead-letter` names the queue and the reason; the runtime turns it
 * into the record (poison record, dead_letter block, or the raw body).
 */
export type Verdict =
  | { readonly kind: 'ack' }
  | { readonly kind: 'retry'; readonly delayMs: number; readonly attempts: number; readonly rule: RetryRule }
  | { readonly kind: 'dead-letter'; readonly queue: string; readonly reason: DeadLetterReason | 'version_gate' }
  /**
   * Acknowledged without a record. `chosen`: the configuration asked for it
   * (`on_unknown_urn: delete`), so it is not a lost message and is logged quietly.
   */
  | { readonly kind: 'drop'; readonly why: string; readonly chosen?: boolean }
  | { readonly kind: 'unsettled'; readonly why: string }
  | { readonly kind: 'native-dead-letter'; readonly why: string };
