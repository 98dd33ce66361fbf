import { failedOutcomes, type OutgoingMessage, type PublishOutcome } from '@babelqueue/core';

/**
 * Publishes a batch as one write per group of messages, every write in flight
 * at once on the connection's pipeline, and maps each write's result back to
 * its messages in the order given. `groupOf` names a message's group (one
 * queue's keys, which share a hash slot, so on a cluster each write goes to
 * its slot's node), or returns the error that refuses it alone. `write`
 * receives one group's messages in order and accepts or fails them together.
 */
export async function publishInGroups(
  messages: readonly OutgoingMessage[],
  groupOf: (message: OutgoingMessage) => string | Error,
  write: (batch: readonly OutgoingMessage[]) => Promise<unknown>,
): Promise<PublishOutcome[]> {
  const outcomes: PublishOutcome[] = new Array(messages.length);
  const groups = new Map<string, number[]>();
  messages.forEach((message, index) => {
    const group = groupOf(message);
    if (group instanceof Error) {
      outcomes[index] = { ok: false, messageId: message.projection.messageId, error: group };
      return;
    }
    const indexes = groups.get(group);
    if (indexes === undefined) groups.set(group, [index]);
    else indexes.push(index);
  });
  if (groups.size === 1 && groups.values().next().value!.length === messages.length) {
    // The common case, one queue: one write, no regrouping.
    return written(messages, await settled(write(messages)));
  }
  await Promise.all([...groups.values()].map(async (indexes) => {
    const batch = indexes.map((i) => messages[i]!);
    const results = written(batch, await settled(write(batch)));
    indexes.forEach((index, k) => {
      outcomes[index] = results[k]!;
    });
  }));
  return outcomes;
}

/** Undefined once `write` succeeded, else why it failed. */
async function settled(write: Promise<unknown>): Promise<{ error: unknown } | undefined> {
  try {
    await write;
    return undefined;
  } catch (error) {
    return { error };
  }
}

function written(batch: readonly OutgoingMessage[], failure: { error: unknown } | undefined): PublishOutcome[] {
  return failure === undefined ? batch.map((m) => ({ ok: true, messageId: m.projection.messageId })) : failedOutcomes(batch, failure.error);
}
