import type { Transport } from '@babelqueue/core';
import { BadQueryError } from './filter.js';

/** A redrive's `to` queue shows no sign of existing: the API answers 409 with `confirm: "create"`, and the page asks. */
export class UnknownTargetError extends Error {
  override readonly name = 'UnknownTargetError';
  constructor(readonly target: string, why: string) {
    super(`the queue "${target}" ${why}; a redrive there may create it (on brokers that create queues on first write) or lose nothing but reach no consumer. Send again with "create": true to go ahead`);
  }
}

/**
 * Checks the `to` queue of a redrive before anything moves:
 * - a DLQ (the one redriven, or any other this console shows) is refused: the
 *   records would land back on a dead-letter queue, reset, and no worker would
 *   run them;
 * - a queue that holds no record is possibly one that does not exist (a typo):
 *   unless `create`, an {@link UnknownTargetError}. Existence is what the
 *   binding's `depth` can tell: a queue with records exists; a depth the
 *   broker refuses (RabbitMQ's 404, SQS's unknown queue) or a depth of 0 cannot
 *   tell an empty queue from a missing one (Redis lists, Kafka topics), so
 *   the page asks once.
 */
export async function checkTarget(transport: Transport, dlq: string, dlqs: readonly string[], to: string, create: boolean): Promise<void> {
  if (to === dlq || dlqs.includes(to)) throw new BadQueryError(`"${to}" is a dead-letter queue: redriving onto it would only move the records to another DLQ; name a work queue, or leave "to" empty to send each record to its own queue`);
  if (create || typeof transport.depth !== 'function') return;
  let depth: number;
  try {
    depth = await transport.depth(to);
  } catch {
    throw new UnknownTargetError(to, 'was not found on the broker');
  }
  if (depth === 0) throw new UnknownTargetError(to, 'holds no records and may not exist');
}
