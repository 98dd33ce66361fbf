import type { DeadLetterReason } from '../settlement/decision.js';
import type { DeadLetterBlock } from '../envelope/types.js';
import { thrownText, thrownType } from '../runtime/thrown.js';

/** The `dead_letter.reason` values (seed 001). */
export const DEAD_LETTER_REASONS: readonly DeadLetterReason[] = ['failed', 'unknown_urn', 'poison'];

/** Input of {@link deadLetterBlock}. */
export interface DeadLetterBlockInput {
  reason: DeadLetterReason;
  /** The error message, or null. */
  error?: string | null;
  /** The error's type name, or null. */
  exception?: string | null;
  /** The queue the message was consumed from (not the body's `meta.queue`). */
  originalQueue: string;
  /** The counted delivery attempt (with max attempts 3 the record reads 3). */
  attempts: number;
  /** Dead-letter time in epoch ms; default `Date.now()`. */
  failedAt?: number;
}

/**
 * Builds a `dead_letter` block, `lang: "node"`, members in canonical order.
 * Throws `TypeError`/`RangeError` for a reason, queue, attempts or time the
 * schema would reject.
 */
export function deadLetterBlock(input: DeadLetterBlockInput): DeadLetterBlock {
  const { reason, originalQueue, attempts } = input;
  const failedAt = input.failedAt ?? Date.now();
  if (!DEAD_LETTER_REASONS.includes(reason)) throw new TypeError(`unknown dead-letter reason ${JSON.stringify(reason)}`);
  if (typeof originalQueue !== 'string') throw new TypeError('originalQueue must be a string');
  if (!Number.isInteger(attempts) || attempts < 0) throw new RangeError(`attempts must be a non-negative integer, got ${attempts}`);
  if (!Number.isSafeInteger(failedAt) || failedAt < 0) throw new RangeError(`failedAt must be epoch milliseconds, got ${failedAt}`);
  return {
    reason,
    error: input.error ?? null,
    exception: input.exception ?? null,
    failed_at: failedAt,
    original_queue: originalQueue,
    attempts,
    lang: 'node',
  };
}

/**
 * The `error` / `exception` pair for a thrown value: an Error gives its
 * message and its type name (`name`, or the class name when `name` was left
 * as "Error"); anything else gives its text (JSON for an object, see
 * {@link thrownText}) and a null exception. `undefined` means nothing was
 * thrown (an unknown URN, poison): both null.
 */
export function describeError(thrown: unknown): { error: string | null; exception: string | null } {
  if (thrown === undefined) return { error: null, exception: null };
  return { error: thrownText(thrown), exception: thrownType(thrown) };
}
