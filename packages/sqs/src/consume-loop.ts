import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { pause, reconnectDelayMs, ReservationKeeper, type ConsumeOptions, type Delivery, type Logger } from '@babelqueue/core';
import { describe, isFatalClientError, isQueueMissing } from './aws-errors.js';
import { logReleaseFailure, SqsDelivery, type DeliveryContext } from './delivery.js';
import { MAX_WAIT_TIME_SECONDS } from './options.js';
import { CALL_RETRY_BACKOFF } from './retry.js';

/** What one consume loop needs from the transport. */
export interface LoopContext extends Omit<DeliveryContext, 'keeper'> {
  readonly client: SQSClient;
  /** Aborted by `close()`: a receive in flight is cancelled instead of awaited. */
  readonly closing: AbortSignal;
}

/** ReceiveMessage hands over at most 10 messages. */
const RECEIVE_MAX = 10;
/** The pause after an empty short poll. */
const SHORT_POLL_PAUSE_MS = 1000;

/**
 * Long-polls one queue and hands the messages over, at most `concurrency`
 * reserved at once (a receive asks for the free slots, up to 10).
 *
 * - FIFO: messages of one group are handed over one after the other, in
 *   order; when one is not deleted (released for a retry, left unsettled),
 *   the rest of its group from that receive are released unhandled, so they
 *   come back after it and the group's order holds.
 * - A graceful stop (the signal) waits for the receive in flight and releases
 *   what it brought (visibility 0), so nothing waits out a visibility timeout;
 *   `close()` cancels the receive instead (a message SQS handed over in that
 *   instant reappears when its visibility timeout lapses).
 * - A receive that fails is logged and tried again with backoff, except for
 *   errors no retry fixes (missing queue, refused credentials): the loop
 *   rejects with those.
 *
 * Resolves after every handed-over delivery has settled.
 */
export async function consumeLoop(
  context: LoopContext,
  onDelivery: (delivery: Delivery) => Promise<void>,
  options: ConsumeOptions,
): Promise<void> {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const { signal, maxMessages, idleMs } = options;
  const { logger } = context;
  const keeper = new ReservationKeeper({
    reservationMs: context.options.visibilityTimeoutSeconds * 1000,
    onTrouble: (why, lost) => logger[lost ? 'error' : 'warn']({ queue: context.queue.name }, why),
  });
  const deliveryContext: DeliveryContext = { ...context, keeper };
  const running = new Set<Promise<void>>();
  /** Received and not yet settled or released (handed over, or waiting behind their FIFO group). */
  let reserved = 0;
  /** Received, waiting behind their FIFO group, not yet handed over. */
  let waiting = 0;
  let handed = 0;
  let lastActivity = Date.now();
  let failures = 0;
  const stopped = () => signal.aborted || context.closing.aborted;
  const left = () => (maxMessages === undefined ? Infinity : maxMessages - handed - waiting);

  /** Hands a FIFO group's messages (or one standard message) over, one after the other. */
  const runChain = async (chain: SqsDelivery[]): Promise<void> => {
    let i = 0;
    try {
      for (; i < chain.length; i++) {
        if (stopped()) break;
        const delivery = chain[i]!;
        waiting -= 1;
        handed += 1;
        lastActivity = Date.now();
        try {
          // onDelivery owns its errors (the runtime logs them and leaves the delivery for redelivery).
          await onDelivery(delivery).catch(() => undefined);
        } finally {
          delivery.finish();
          reserved -= 1;
          lastActivity = Date.now();
        }
        if (!delivery.removed) {
          i += 1;
          break;
        }
      }
    } finally {
      const rest = chain.slice(i);
      waiting -= rest.length;
      reserved -= rest.length;
      await release(logger, context.queue.name, rest);
    }
  };

  try {
    while (!stopped() && left() > 0) {
      if (reserved >= concurrency) {
        await Promise.race(running);
        continue;
      }
      let waitMs = context.options.waitTimeSeconds * 1000;
      if (idleMs !== undefined) {
        const idleLeft = idleMs - (Date.now() - lastActivity);
        if (idleLeft <= 0) {
          if (running.size === 0) break;
          await Promise.race(running);
          continue;
        }
        waitMs = Math.min(waitMs, idleLeft);
      }
      const want = Math.min(RECEIVE_MAX, concurrency - reserved, left());
      const waitSeconds = Math.min(MAX_WAIT_TIME_SECONDS, Math.ceil(waitMs / 1000));
      let messages: Message[];
      try {
        messages = await receive(context, want, waitSeconds);
        failures = 0;
      } catch (error) {
        if (context.closing.aborted) break;
        if (isQueueMissing(error) || isFatalClientError(error)) throw error;
        failures += 1;
        const pauseMs = reconnectDelayMs(CALL_RETRY_BACKOFF, failures);
        logger.warn({ queue: context.queue.name, error: describe(error), retryInMs: pauseMs }, 'receive failed; trying again');
        await pause(pauseMs, signal, context.closing);
        continue;
      }
      if (messages.length === 0 && waitSeconds === 0) {
        // Short polling (waitTimeSeconds: 0): an empty answer comes back at once, so pause instead of spinning.
        const idleLeft = idleMs === undefined ? SHORT_POLL_PAUSE_MS : idleMs - (Date.now() - lastActivity);
        await pause(Math.max(0, Math.min(SHORT_POLL_PAUSE_MS, idleLeft)), signal, context.closing);
        continue;
      }
      const deliveries = messages.map((message) => new SqsDelivery(deliveryContext, message));
      if (stopped()) {
        await release(logger, context.queue.name, deliveries);
        break;
      }
      reserved += deliveries.length;
      waiting += deliveries.length;
      for (const chain of chains(deliveries, context.queue.fifo)) {
        const job: Promise<void> = runChain(chain).finally(() => running.delete(job));
        running.add(job);
      }
    }
  } finally {
    await Promise.allSettled(running);
    keeper.close();
  }
}

async function receive(context: LoopContext, max: number, waitSeconds: number): Promise<Message[]> {
  const { Messages = [] } = await context.client.send(new ReceiveMessageCommand({
    QueueUrl: context.queue.url,
    MaxNumberOfMessages: max,
    WaitTimeSeconds: waitSeconds,
    VisibilityTimeout: context.options.visibilityTimeoutSeconds,
    MessageAttributeNames: ['All'],
    MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
    // FIFO: the SDK's own retries of this call reuse the id, so a receive whose
    // answer was lost on the network hands the same messages over again.
    ...(context.queue.fifo ? { ReceiveRequestAttemptId: randomUUID() } : {}),
  }), { abortSignal: context.closing });
  return Messages;
}

/** Standard queue: every message alone. FIFO: one chain per message group, in received order. */
function chains(deliveries: SqsDelivery[], fifo: boolean): SqsDelivery[][] {
  if (!fifo) return deliveries.map((d) => [d]);
  const groups = new Map<string | undefined, SqsDelivery[]>();
  for (const delivery of deliveries) {
    const group = groups.get(delivery.groupId);
    if (group === undefined) groups.set(delivery.groupId, [delivery]);
    else group.push(delivery);
  }
  return [...groups.values()];
}

/** Releases messages that will not be handed over (visibility 0), reporting a failed release. */
async function release(logger: Logger, queue: string, deliveries: SqsDelivery[]): Promise<void> {
  await Promise.all(deliveries.map((d) => d.release(0).catch((error: unknown) => logReleaseFailure(logger, queue, error))));
}
