import type { DeadLetterReason } from '../settlement/decision.js';
import type { Envelope } from '../envelope/types.js';
import { deadLetterBlock } from './block.js';

/** Options of {@link annotate}. */
export interface AnnotateOptions {
  /** The counted delivery attempt. */
  attempts: number;
  error?: string | null;
  exception?: string | null;
  /** Dead-letter time in epoch ms; default now. */
  failedAt?: number;
}

/**
 * A copy of `env` with a `dead_letter` block (`lang: "node"`, `failed_at` in
 * ms), everything else shared with the original. For re-emitting a consumed
 * body byte for byte use `withDeadLetter(raw, block)` instead.
 */
export function annotate(env: Envelope, reason: DeadLetterReason, originalQueue: string, options: AnnotateOptions): Envelope {
  return { ...env, dead_letter: deadLetterBlock({ reason, originalQueue, ...options }) };
}
