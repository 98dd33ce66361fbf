import type { Connection, EventContext, Message as AmqpMessage, Receiver } from 'rhea';
import { ArtemisUnavailableError } from './errors.js';
import { readBody } from './message.js';

/** How long one drain round may take before it is given up (the broker answers a drain at once). */
const DRAIN_TIMEOUT_MS = 10_000;
/** Credit of one purge round. */
const PURGE_BATCH = 500;

/**
 * Reads up to `max` bodies from the head of `queue` without consuming them: a
 * browsing receiver (`distribution-mode: copy`, which Artemis serves with a
 * queue browser) given `max` credit in drain mode, so the broker sends what it
 * has and then says it has no more.
 */
export async function browseQueue(connection: Connection, lost: Promise<void>, queue: string, max: number): Promise<Buffer[]> {
  if (max <= 0) return [];
  const bodies: Buffer[] = [];
  await withReceiver(connection, lost, queue, 'copy', async (receiver) => {
    await drainRound(receiver, max, (message) => {
      if (bodies.length < max) bodies.push(readBody(message).body);
    });
  });
  return bodies;
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
  const receiver = connection.open_receiver({
    source: { address: queue, capabilities: ['queue'], ...(mode === 'copy' ? { distribution_mode: 'copy' } : {}) },
    autoaccept: false,
    credit_window: 0,
  });
  const closed = new Promise<void>((resolve) => receiver.once('receiver_close', () => resolve()));
  const gone = lost.then(() => {
    throw new ArtemisUnavailableError(`the connection was lost while reading "${queue}"`);
  });
  gone.catch(() => undefined);
  try {
    await Promise.race([
      gone,
      new Promise<void>((resolve, reject) => {
        receiver.once('receiver_open', () => resolve());
        receiver.once('receiver_close', (context: EventContext) => reject(linkError(queue, context)));
      }),
    ]);
    await Promise.race([gone, use(receiver)]);
  } finally {
    if (!receiver.is_closed() && connection.is_open()) {
      receiver.close();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
      clearTimeout(timer);
    }
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
