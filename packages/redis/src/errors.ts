import { BabelQueueError, CapabilityError } from '@babelqueue/core/binding';

/** The broker name this binding's errors carry. */
export const BROKER = 'Redis';

/**
 * Redis Cluster refused a multi-key step because the keys of one queue sit in
 * different hash slots. The fix is a hash tag in the queue name.
 */
export class CrossSlotError extends BabelQueueError {
  override readonly name = 'CrossSlotError';
  constructor(readonly queue: string, readonly deadLetterQueue?: string, options?: { cause?: unknown }) {
    super(
      deadLetterQueue === undefined
        ? `Redis Cluster: the keys of queue "${queue}" hash to different slots (CROSSSLOT). ` +
            `Put a hash tag in the queue name, for example "{${queue}}", and use that same name in every ` +
            'producer and consumer; the binding uses queue names as given and never adds braces.'
        : `Redis Cluster: dead-letter queue "${deadLetterQueue}" is not in the hash slot of queue "${queue}" ` +
            `(CROSSSLOT). Give it the queue's hash tag, for example "{${stripTag(queue)}}.dlq".`,
      { ...options, broker: BROKER },
    );
  }
}

/** The legacy layout has no delayed set; a delayed publish is refused. */
export class DelayedPublishUnsupportedError extends CapabilityError {
  constructor(readonly queue: string) {
    super(
      `the Redis legacy layout has no delayed set, so a delayed publish to "${queue}" is refused; ` +
        'use layout: "zset" when you need a delay',
      { broker: BROKER },
    );
  }
}

/**
 * True when the keys of one command sit in different slots: Redis answered
 * CROSSSLOT, or ioredis refused to pipeline the command (auto-pipelining
 * checks slots before sending).
 */
export function isCrossSlot(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.message.startsWith('CROSSSLOT') || error.message.includes('should belong to the same slot'))
  );
}

/** Errors no retry can cure: the consume loop stops on them instead of polling forever. */
export function isFatal(error: unknown): boolean {
  return (
    error instanceof CrossSlotError ||
    isCrossSlot(error) ||
    (error instanceof Error && error.message.startsWith('WRONGTYPE'))
  );
}

/** Runs a Redis step of `queue`, turning CROSSSLOT into a {@link CrossSlotError} that names the fix. */
export async function slotGuard<T>(queue: string, step: Promise<T>, deadLetterQueue?: string): Promise<T> {
  try {
    return await step;
  } catch (error) {
    if (isCrossSlot(error)) throw new CrossSlotError(queue, deadLetterQueue, { cause: error });
    throw error;
  }
}

function stripTag(queue: string): string {
  const m = /\{([^}]+)\}/.exec(queue);
  return m?.[1] ?? queue;
}

/**
 * A publish is on the primary, but fewer replicas than `waitForReplicas`
 * confirmed it (Redis `WAIT`) in time: it could be lost if the primary fails
 * now. Publishing it again may deliver it twice (at least once).
 */
export class ReplicationTimeoutError extends BabelQueueError {
  override readonly name = 'ReplicationTimeoutError';
  constructor(readonly queue: string, readonly confirmed: number, readonly wanted: number, readonly timeoutMs: number) {
    super(
      `the publish to "${queue}" is on the Redis primary, but ${confirmed} of the ${wanted} replica(s) waitForReplicas asks for ` +
        `confirmed it within ${timeoutMs} ms: it could be lost if the primary fails now; publishing it again may deliver it twice`,
      { broker: BROKER },
    );
  }
}
