import { GetQueueAttributesCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Logger, ScannedRecord, ScanOptions } from '@babelqueue/core';
import { headersOf } from './projection.js';
import { describe } from './aws-errors.js';
import type { QueueInfo } from './queues.js';
import type { SettleBatcher } from './settle-batcher.js';

/** How long browsed messages are leased while the browse collects them, in seconds. */
export const BROWSE_LEASE_SECONDS = 30;

/**
 * True for a BabelQueue dead-letter queue's name on SQS: `<queue>-dlq` or
 * `<queue>-dlq.fifo`. Browse and remove read only these unless told otherwise
 * (`browseWorkQueues`): a read is a receive, and on a work queue a receive
 * costs the message an attempt.
 */
export function isDeadLetterQueueName(queue: string): boolean {
  return /-dlq(\.fifo)?$/.test(queue);
}

/** What browse and purge need. */
export interface ToolContext {
  readonly client: SQSClient;
  readonly batcher: SettleBatcher;
  readonly logger: Logger;
}

/**
 * Reads up to `max` bodies without consuming them. SQS has no peek: messages
 * are received with a short lease ({@link BROWSE_LEASE_SECONDS}) until `max`
 * are collected or a one-second long poll finds no more, then all are made
 * visible again at once (`ChangeMessageVisibility` 0). Each browse counts as
 * one receive in `ApproximateReceiveCount` (and towards a RedrivePolicy), and
 * for a few seconds the browsed messages are invisible to consumers. On a
 * FIFO queue a group's messages behind the first leased ones stay hidden
 * until the lease ends, so a browse sees at most one receive's worth per group.
 */
export async function browseQueue(context: ToolContext, queue: QueueInfo, max: number): Promise<Buffer[]> {
  const taken: Message[] = [];
  try {
    while (taken.length < max) {
      const batch = await receiveLeased(context, queue, Math.min(10, max - taken.length));
      if (batch.length === 0) break;
      taken.push(...batch);
    }
  } finally {
    await release(context, queue, taken);
  }
  return taken.map((m) => Buffer.from(m.Body ?? '', 'utf8'));
}

/**
 * Reads every message a receive can see, oldest receive first, without
 * consuming any: SQS has no peek, so this is a leased read (the binding
 * declares `scan: 'leased'`). Messages are received ten at a time with a
 * {@link BROWSE_LEASE_SECONDS} lease and held (their receipt handles only)
 * until the iteration ends, when all are made visible again at once; holding
 * them is what keeps a receive from handing the same message twice. The
 * scan ends when a one-second long poll finds no more, or at the lease's
 * end (a message whose lease lapsed could come again), which bounds one scan
 * to what can be received in {@link BROWSE_LEASE_SECONDS}. As {@link browseQueue}:
 * each message read counts one receive, and it is hidden from consumers
 * while the scan runs. A standard queue keeps no order, so `index` is the
 * order of this scan's receives.
 */
export async function* scanQueue(context: ToolContext, queue: QueueInfo, options: ScanOptions): AsyncGenerator<ScannedRecord> {
  const offset = options.offset ?? 0;
  const leasedUntil = Date.now() + (BROWSE_LEASE_SECONDS - 5) * 1000;
  const taken: Message[] = [];
  try {
    const aborted = () => options.signal?.aborted === true;
    while (!aborted() && Date.now() < leasedUntil) {
      const batch = await receiveLeased(context, queue, 10);
      if (batch.length === 0) return;
      // The whole batch is held before any of it is yielded: a reader that stops mid-batch releases all of it.
      const first = taken.length;
      taken.push(...batch);
      for (const [i, message] of batch.entries()) {
        if (aborted()) return;
        if (first + i < offset) continue;
        yield { body: Buffer.from(message.Body ?? '', 'utf8'), headers: headersOf(message.MessageAttributes), index: first + i };
      }
    }
  } finally {
    await release(context, queue, taken);
  }
}

/** Makes leased messages visible again at once (`ChangeMessageVisibility` 0); one that fails stays hidden until its lease ends. */
async function release(context: ToolContext, queue: QueueInfo, leased: readonly Message[]): Promise<void> {
  await Promise.all(leased.map((m) => context.batcher.changeVisibility(queue.url, m.ReceiptHandle!, 0).catch((error: unknown) =>
    context.logger.warn({ queue: queue.name, error: describe(error) }, `a browsed message stays hidden until its ${BROWSE_LEASE_SECONDS} s lease ends`))));
}

/**
 * Deletes one message whose body is `body` byte for byte: SQS deletes only by
 * the receipt handle of a receive, so messages are leased ten at a time (as
 * {@link browseQueue} does) until one matches or a one-second long poll finds
 * no more; that one is deleted, every other one is made visible again at
 * once. Resolves false when none matched (taken meanwhile). Like a browse,
 * each message received on the way counts one receive.
 */
export async function removeFromQueue(context: ToolContext, queue: QueueInfo, body: Buffer): Promise<boolean> {
  const passed: Message[] = [];
  try {
    for (;;) {
      const batch = await receiveLeased(context, queue, 10);
      if (batch.length === 0) return false;
      const match = batch.find((m) => Buffer.from(m.Body ?? '', 'utf8').equals(body));
      passed.push(...batch.filter((m) => m !== match));
      if (match !== undefined) {
        await context.batcher.delete(queue.url, match.ReceiptHandle!);
        return true;
      }
    }
  } finally {
    await release(context, queue, passed);
  }
}

/**
 * How many messages wait visible on `queue`: `ApproximateNumberOfMessages`,
 * exact on a quiet queue, an estimate on a busy one (SQS says so). Messages a
 * consumer holds right now and delayed ones are not counted, as a browse does
 * not see them.
 */
export async function queueDepth(context: ToolContext, queue: QueueInfo): Promise<number> {
  const { Attributes = {} } = await context.client.send(new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: ['ApproximateNumberOfMessages'] }));
  return Number(Attributes.ApproximateNumberOfMessages ?? 0);
}

/**
 * Deletes every message a receive can see and returns how many: leased and
 * deleted ten at a time until a one-second long poll finds no more. Messages
 * another consumer holds right now are not counted and stay (unlike
 * `PurgeQueue`, which SQS allows once a minute and which reports no count).
 */
export async function purgeQueue(context: ToolContext, queue: QueueInfo): Promise<number> {
  let purged = 0;
  for (;;) {
    const batch = await receiveLeased(context, queue, 10);
    if (batch.length === 0) return purged;
    await Promise.all(batch.map((m) => context.batcher.delete(queue.url, m.ReceiptHandle!)));
    purged += batch.length;
  }
}

async function receiveLeased(context: ToolContext, queue: QueueInfo, max: number): Promise<Message[]> {
  const { Messages = [] } = await context.client.send(new ReceiveMessageCommand({
    QueueUrl: queue.url,
    MaxNumberOfMessages: max,
    WaitTimeSeconds: 1,
    VisibilityTimeout: BROWSE_LEASE_SECONDS,
    MessageAttributeNames: ['All'],
  }));
  return Messages;
}
