import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { pause, reconnectDelayMs, type ConsumeOptions, type Logger } from '@babelqueue/core';
import { ReservationKeeper, type Delivery } from '@babelqueue/core/binding';
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
 * Long-polls one queue and hands every message it receives over at once, at
 * most `concurrency` reserved at a time (a receive asks for the free slots,
 * up to 10).
 *
 * Every receive counts in the message's `ApproximateReceiveCount`, which the
 * runtime reads as attempts, so the loop never receives a message it will not
 * hand over (a message given back unhandled would have spent an attempt):
 *
 * - FIFO: a receive asks for one message. SQS returns several of one group
 *   together, and the later ones could not run before the first settled: if
 *   it were retried they would go back unhandled, counted. With one at a time
 *   SQS itself holds the rest of the group back (none is returned while one is
 *   in flight), so the group's order holds and only handled receives count.
 * - A graceful stop (the signal) waits for the receive in flight and hands
 *   over what it brought (giving it back would count a receive no handler
 *   saw), saying in a log line how long it may wait. With `stopWaitsForPoll:
 *   false` it cancels the receive instead, so an idle worker stops at once;
 *   SQS keeps the cancelled receive open on its side for the rest of its wait,
 *   and a message that arrives meanwhile is given to it: that message comes
 *   back after the visibility timeout, one receive counted (see the README).
 *   `close()` always cancels it; what SQS handed over in that instant is given
 *   back (visibility 0).
 * - A receive that fails is logged and tried again with backoff, except for
 *   errors no retry fixes (refused credentials): the loop rejects with those.
 *   A queue that answers `QueueDoesNotExist` is polled again for
 *   `missingQueueGraceMs` (a server restoring its queues after a restart says
 *   so for a moment) and rejects after that.
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
  const perReceive = context.queue.fifo ? 1 : RECEIVE_MAX;
  const running = new Set<Promise<void>>();
  /** Handed over and not yet done with. */
  let reserved = 0;
  let handed = 0;
  let lastActivity = Date.now();
  let failures = 0;
  /** When the queue began answering `QueueDoesNotExist` (undefined while it answers). */
  let missingSince: number | undefined;
  const stopped = () => signal.aborted || context.closing.aborted;
  const left = () => (maxMessages === undefined ? Infinity : maxMessages - handed);
  /** What cancels a receive in flight: close(), and the stop signal unless the stop waits for the poll. */
  const cancel = context.options.stopWaitsForPoll ? context.closing : AbortSignal.any([signal, context.closing]);

  const handOver = async (delivery: SqsDelivery): Promise<void> => {
    try {
      // onDelivery owns its errors (the runtime logs them and leaves the delivery for redelivery).
      await onDelivery(delivery).catch(() => undefined);
    } finally {
      delivery.finish();
      reserved -= 1;
      lastActivity = Date.now();
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
      const want = Math.min(perReceive, concurrency - reserved, left());
      const waitSeconds = Math.min(MAX_WAIT_TIME_SECONDS, Math.ceil(waitMs / 1000));
      let messages: Message[];
      // A stop that waits for this poll says so: a silent wait of up to 20 s looks hung.
      const announce = () => logger.info({ queue: context.queue.name, waitSeconds }, `stopping: waiting up to ${waitSeconds} s for the SQS long poll in flight, whose messages are handed over (stopWaitsForPoll: false cancels it, at a cost: see the README)`);
      const waits = context.options.stopWaitsForPoll && waitSeconds > 1 && !signal.aborted;
      if (waits) signal.addEventListener('abort', announce, { once: true });
      try {
        messages = await receive(context, want, waitSeconds, cancel);
        failures = 0;
        missingSince = undefined;
      } catch (error) {
        if (cancel.aborted) break;
        const missing = isQueueMissing(error);
        if (missing) {
          missingSince ??= Date.now();
          if (Date.now() - missingSince >= context.options.missingQueueGraceMs) throw error;
        } else if (isFatalClientError(error)) {
          throw error;
        }
        failures += 1;
        const pauseMs = reconnectDelayMs(CALL_RETRY_BACKOFF, failures);
        logger.warn(
          { queue: context.queue.name, error: describe(error), retryInMs: pauseMs },
          missing
            ? `the queue answers that it does not exist; polling it again for up to ${context.options.missingQueueGraceMs} ms (missingQueueGraceMs) in case it is being restored`
            : 'receive failed; trying again',
        );
        await pause(pauseMs, signal, context.closing);
        continue;
      } finally {
        if (waits) signal.removeEventListener('abort', announce);
      }
      if (messages.length === 0 && waitSeconds === 0) {
        // Short polling (waitTimeSeconds: 0): an empty answer comes back at once, so pause instead of spinning.
        const idleLeft = idleMs === undefined ? SHORT_POLL_PAUSE_MS : idleMs - (Date.now() - lastActivity);
        await pause(Math.max(0, Math.min(SHORT_POLL_PAUSE_MS, idleLeft)), signal, context.closing);
        continue;
      }
      const deliveries = messages.map((message) => new SqsDelivery(deliveryContext, message));
      if (context.closing.aborted) {
        await release(logger, context.queue.name, deliveries);
        break;
      }
      for (const delivery of deliveries) {
        reserved += 1;
        handed += 1;
        lastActivity = Date.now();
        const job: Promise<void> = handOver(delivery).finally(() => running.delete(job));
        running.add(job);
      }
    }
  } finally {
    await Promise.allSettled(running);
    keeper.close();
  }
}

async function receive(context: LoopContext, max: number, waitSeconds: number, cancel: AbortSignal): Promise<Message[]> {
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
  }), { abortSignal: cancel });
  return Messages;
}

/** Gives back messages received as `close()` cancelled the receive (visibility 0), reporting a failed release. */
async function release(logger: Logger, queue: string, deliveries: SqsDelivery[]): Promise<void> {
  await Promise.all(deliveries.map((d) => d.release(0).catch((error: unknown) => logReleaseFailure(logger, queue, error))));
}
