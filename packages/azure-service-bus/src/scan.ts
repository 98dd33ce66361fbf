import { isServiceBusError, type ServiceBusClient, type ServiceBusReceivedMessage, type ServiceBusReceiver } from '@azure/service-bus';
import type { ScannedRecord, ScanOptions } from '@babelqueue/core';
import Long from 'long';
import { bodyBytes, plainProperties } from './projection.js';

/** Messages one peek asks for. */
export const PEEK_BATCH = 100;

type SequenceNumber = NonNullable<ServiceBusReceivedMessage['sequenceNumber']>;

/**
 * The messages of `queue` from its head, oldest first, read with the SDK's
 * `peekMessages` (no lock, no delivery counted) in batches of
 * {@link PEEK_BATCH}, each batch asked from the sequence number after the
 * last one read (`fromSequenceNumber`, always given: without it the SDK goes
 * on after the last message any receiver of the entity peeked). Sequence numbers are not dense, so
 * `offset` is reached by peeking past the first records. What a peek sees is
 * what the scan reads: active messages and, as Service Bus peeks them, locked,
 * deferred and scheduled ones. A queue that does not exist reads as empty.
 */
export async function* peekQueue(client: ServiceBusClient, queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
  const offset = options.offset ?? 0;
  let index = 0;
  for await (const message of peekMessagesOf(client, queue, options.signal)) {
    if (index >= offset) yield scanned(message, index);
    index += 1;
  }
}

/** The SessionIds of the messages of `queue` (waiting, locked or scheduled), in order of their first message, found by peeking. */
export async function sessionIdsOf(client: ServiceBusClient, queue: string): Promise<string[]> {
  const sessions = new Set<string>();
  for await (const message of peekMessagesOf(client, queue)) if (message.sessionId !== undefined) sessions.add(message.sessionId);
  return [...sessions];
}

/** Every message of `queue` from its head, peeked a batch at a time (see {@link peekQueue}). */
async function* peekMessagesOf(client: ServiceBusClient, queue: string, signal?: AbortSignal): AsyncGenerator<ServiceBusReceivedMessage> {
  const receiver = client.createReceiver(queue, { skipParsingBodyAsJson: true });
  try {
    let from: SequenceNumber = Long.ONE;
    for (;;) {
      if (signal?.aborted) return;
      const batch = await peekBatch(receiver, from, signal);
      if (batch.length === 0) return;
      for (const message of batch) {
        yield message;
        if (signal?.aborted) return;
      }
      const last = batch[batch.length - 1]!.sequenceNumber;
      if (last === undefined) return;
      from = last.add(1);
    }
  } finally {
    await receiver.close().catch(() => undefined);
  }
}

/** How many messages a full {@link peekQueue} reads: counted by peeking, the bodies dropped batch by batch. */
export async function countByPeeking(client: ServiceBusClient, queue: string): Promise<number> {
  let count = 0;
  for await (const _ of peekQueue(client, queue)) count += 1;
  return count;
}

async function peekBatch(receiver: ServiceBusReceiver, from: SequenceNumber, signal: AbortSignal | undefined): Promise<ServiceBusReceivedMessage[]> {
  try {
    return await receiver.peekMessages(PEEK_BATCH, { fromSequenceNumber: from, ...(signal ? { abortSignal: signal } : {}) });
  } catch (error) {
    if (isServiceBusError(error) && error.code === 'MessagingEntityNotFound') return [];
    if (signal?.aborted) return [];
    throw error;
  }
}

function scanned(message: ServiceBusReceivedMessage, index: number): ScannedRecord {
  const body = bodyBytes(message) ?? Buffer.from(JSON.stringify(message.body) ?? '', 'utf8');
  const location = message.sequenceNumber === undefined ? undefined : `sequence number ${message.sequenceNumber.toString()}`;
  // A peek shows messages another receiver holds; until their lock lapses no one else can take them.
  const lockedUntil = message.lockedUntilUtc?.getTime();
  return {
    body,
    headers: plainProperties(message),
    index,
    ...(location === undefined ? {} : { location }),
    ...(lockedUntil !== undefined && lockedUntil > Date.now() ? { lockedUntil } : {}),
  };
}
