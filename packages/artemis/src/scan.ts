import type { ScannedRecord, ScanOptions } from '@babelqueue/core';
import type { Connection, EventContext, Message as AmqpMessage, Receiver } from 'rhea';
import { ArtemisUnavailableError } from './errors.js';
import { plainProperties, readBody } from './projection.js';

/** How long one drain round may take before it is given up (the broker answers a drain at once). */
const DRAIN_TIMEOUT_MS = 10_000;
/** Credit of one purge round. */
const PURGE_BATCH = 500;
/** Credit of one scan round: the most messages a scan holds in memory at once. */
export const SCAN_BATCH = 200;

/**
 * Reads up to `max` bodies from the head of `queue` without consuming them: a
 * browsing receiver (`distribution-mode: copy`, which Artemis serves with a
 * queue browser) drained a round at a time, as {@link scanQueue} does, until
 * `max` or a round that brings nothing. One round is not enough: Artemis may
 * answer a drain before its browser has reached every message (a `dlq list`
 * printed 79 to 100 records of 100 as the whole DLQ).
 */
export async function browseQueue(connection: Connection, lost: Promise<void>, queue: string, max: number): Promise<Buffer[]> {
  if (max <= 0) return [];
  const bodies: Buffer[] = [];
  await withReceiver(connection, lost, queue, 'copy', async (receiver) => {
    for (;;) {
      const before = bodies.length;
      await drainRound(receiver, Math.min(SCAN_BATCH, max - bodies.length), (message) => {
        if (bodies.length < max) bodies.push(readBody(message).body);
      });
      if (bodies.length === before || bodies.length >= max) return;
    }
  });
  return bodies;
}

/**
 * The messages waiting on `queue` from its head, oldest first, skipping the
 * first `offset`: one browsing receiver (`distribution-mode: copy`) drained
 * {@link SCAN_BATCH} at a time, each round going on where the last stopped.
 * A browser takes nothing and counts no delivery. It sees what a consumer
 * could be given now: not scheduled messages before their delivery time, and
 * not messages delivered to a consumer and unsettled. A queue that does not
 * exist reads as empty.
 */
export async function* scanQueue(connection: Connection, lost: Promise<void>, queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
  const offset = options.offset ?? 0;
  const link = await openReceiver(connection, lost, queue, 'copy');
  try {
    let index = 0;
    for (;;) {
      if (options.signal?.aborted) return;
      const batch: AmqpMessage[] = [];
      await Promise.race([link.gone, drainRound(link.receiver, SCAN_BATCH, (message) => batch.push(message))]);
      if (batch.length === 0) return;
      for (const message of batch) {
        if (index >= offset) yield scanned(message, index);
        index += 1;
        if (options.signal?.aborted) return;
      }
    }
  } finally {
    await closeReceiver(connection, link);
  }
}

/** How many messages a full {@link scanQueue} reads now: counted by browsing, the bodies dropped round by round. */
export async function countByBrowsing(connection: Connection, lost: Promise<void>, queue: string): Promise<number> {
  let count = 0;
  for await (const _ of scanQueue(connection, lost, queue)) count += 1;
  return count;
}

function scanned(message: AmqpMessage, index: number): ScannedRecord {
  const id = message.message_id;
  const location = id === undefined || id === null ? undefined : `message-id ${String(id as unknown)}`;
  return { body: readBody(message).body, headers: plainProperties(message.application_properties), index, ...(location === undefined ? {} : { location }) };
}

/**
 * Removes every message waiting on `queue` (not those delivered to a consumer
 * right now, nor scheduled ones not yet due): AMQP has no purge, so a receiver
 * takes and accepts them in drained rounds until a round finds none. Resolves
 * with how many it removed.
 */
export async function purgeQueue(connection: Connection, lost: Promise<void>, queue: string): Promise<number> {
  let removed = 0;
  await withReceiver(connection, lost, queue, 'move', async (receiver) => {
    for (;;) {
      let round = 0;
      await drainRound(receiver, PURGE_BATCH, (_message, context) => {
        context.delivery?.accept();
        round += 1;
      });
      removed += round;
      if (round === 0) return;
    }
  });
  return removed;
}

async function withReceiver(
  connection: Connection,
  lost: Promise<void>,
  queue: string,
  mode: 'copy' | 'move',
  use: (receiver: Receiver) => Promise<void>,
): Promise<void> {
  const link = await openReceiver(connection, lost, queue, mode);
  try {
    await Promise.race([link.gone, use(link.receiver)]);
  } finally {
    await closeReceiver(connection, link);
  }
}

/** An attached receiving link, its close, and a promise that rejects if the connection is lost. */
interface Link {
  readonly receiver: Receiver;
  readonly closed: Promise<void>;
  readonly gone: Promise<never>;
}

/** Attaches a receiver of `queue` (Artemis creates a missing queue on attach, so it reads as empty). */
async function openReceiver(connection: Connection, lost: Promise<void>, queue: string, mode: 'copy' | 'move'): Promise<Link> {
  const receiver = connection.open_receiver({
    source: { address: queue, capabilities: ['queue'], ...(mode === 'copy' ? { distribution_mode: 'copy' } : {}) },
    autoaccept: false,
    credit_window: 0,
  });
  const closed = new Promise<void>((resolve) => receiver.once('receiver_close', () => resolve()));
  const gone = lost.then((): never => {
    throw new ArtemisUnavailableError(`the connection was lost while reading "${queue}"`);
  });
  gone.catch(() => undefined);
  const link = { receiver, closed, gone };
  try {
    await Promise.race([
      gone,
      new Promise<void>((resolve, reject) => {
        receiver.once('receiver_open', () => resolve());
        receiver.once('receiver_close', (context: EventContext) => reject(linkError(queue, context)));
      }),
    ]);
  } catch (error) {
    await closeReceiver(connection, link);
    throw error;
  }
  return link;
}

async function closeReceiver(connection: Connection, link: Link): Promise<void> {
  if (!link.receiver.is_closed() && connection.is_open()) {
    link.receiver.close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([link.closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
  }
}

/**
 * Grants `credit` in drain mode and collects what arrives until the broker
 * reports the drain done, or the credit is used up (then no drain answer comes).
 */
function drainRound(receiver: Receiver, credit: number, take: (message: AmqpMessage, context: EventContext) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let received = 0;
    const onMessage = (context: EventContext) => {
      take(context.message as AmqpMessage, context);
      received += 1;
      if (received === credit) done();
    };
    const done = (error?: Error) => {
      clearTimeout(timer);
      receiver.removeListener('message', onMessage);
      receiver.removeListener('receiver_drained', onDrained);
      receiver.removeListener('receiver_close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrained = () => done();
    const onClose = (context: EventContext) => done(linkError(receiver.source.address ?? '', context));
    const timer = setTimeout(() => done(new Error('Artemis did not answer a drain in time')), DRAIN_TIMEOUT_MS);
    receiver.on('message', onMessage);
    receiver.on('receiver_drained', onDrained);
    receiver.on('receiver_close', onClose);
    receiver.drain = true;
    receiver.add_credit(credit);
  });
}

function linkError(queue: string, context: EventContext): Error {
  const error = context.receiver?.error as { condition?: string; description?: string } | undefined;
  const why = error ? [error.condition, error.description].filter(Boolean).join(': ') : 'the link closed';
  return new Error(`Artemis refused to read "${queue}": ${why}`);
}
