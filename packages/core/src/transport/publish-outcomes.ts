import type { OutgoingMessage, PublishOutcome } from './transport.js';

/**
 * The outcomes of sends already under way, one promise per message in the
 * same order: `ok` where it resolved, the reason where it rejected. For
 * bindings whose batching is "send all, then await each settlement", and for
 * the App's fallback when a transport has no `publishMany`.
 */
export async function publishOutcomes(
  messages: readonly OutgoingMessage[],
  sends: readonly Promise<unknown>[],
): Promise<PublishOutcome[]> {
  const settled = await Promise.allSettled(sends);
  return settled.map((result, index) => {
    const messageId = messages[index]!.projection.messageId;
    return result.status === 'fulfilled' ? { ok: true, messageId } : { ok: false, messageId, error: asError(result.reason) };
  });
}

/**
 * The outcomes of a batch from each message's failure, in the same order:
 * `ok` where the failure is undefined, else that reason. For bindings that
 * settle a batch through callbacks rather than a promise per message.
 */
export function outcomesOf(messages: readonly OutgoingMessage[], failures: readonly unknown[]): PublishOutcome[] {
  return messages.map((message, index) => {
    const failure = failures[index];
    const messageId = message.projection.messageId;
    return failure === undefined ? { ok: true, messageId } : { ok: false, messageId, error: asError(failure) };
  });
}

/** Every message failed with one error (a batch refused as a whole). */
export function failedOutcomes(messages: readonly OutgoingMessage[], error: unknown): PublishOutcome[] {
  const reason = asError(error);
  return messages.map((message) => ({ ok: false, messageId: message.projection.messageId, error: reason }));
}

/**
 * The indexes of `messages` grouped by queue, each group in message order,
 * the groups in the order their queue first appears: for bindings that batch
 * per queue and answer with one outcome per message, in order.
 */
export function indexesByQueue(messages: readonly OutgoingMessage[]): Map<string, number[]> {
  const byQueue = new Map<string, number[]>();
  messages.forEach((message, index) => {
    const indexes = byQueue.get(message.queue);
    if (indexes === undefined) byQueue.set(message.queue, [index]);
    else indexes.push(index);
  });
  return byQueue;
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
