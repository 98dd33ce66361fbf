import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Channel, ConsumeMessage } from 'amqplib';
import { createApp } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { Acker } from '../src/acker.js';
import { captureLogger, envelope, Raw, rabbit, uniqueQueue, until } from './support/rabbit.js';

const URN = 'urn:babel:orders:created';
/** Bounds every wait: only a failing run waits this long. */
const WAIT_MS = 30_000;

/** A settlement as it reached amqplib. */
interface Sent {
  op: 'ack' | 'nack';
  tag: number;
  multiple: boolean;
}

/** Records every ack/nack made on `channel` (still sent to the broker). */
function record(channel: Channel): Sent[] {
  const sent: Sent[] = [];
  const { ack, nack } = channel;
  channel.ack = (message, multiple = false) => {
    sent.push({ op: 'ack', tag: message.fields.deliveryTag, multiple });
    ack.call(channel, message, multiple);
  };
  channel.nack = (message, multiple = false, requeue = true) => {
    sent.push({ op: 'nack', tag: message.fields.deliveryTag, multiple });
    nack.call(channel, message, multiple, requeue);
  };
  return sent;
}

/**
 * Replays the settlements with RabbitMQ's rules: a `multiple` ack settles every
 * outstanding tag up to its own, anything else exactly its own tag, which must
 * be outstanding. Returns how often each tag was settled.
 */
function replay(delivered: number[], sent: Sent[]): { settled: Map<number, number>; multiples: number } {
  const outstanding = new Set(delivered);
  const settled = new Map<number, number>();
  let multiples = 0;
  for (const { tag, multiple } of sent) {
    assert.ok(outstanding.has(tag), `tag ${tag} was settled while not outstanding`);
    const covered = multiple ? [...outstanding].filter((t) => t <= tag) : [tag];
    if (multiple) multiples += 1;
    for (const t of covered) {
      outstanding.delete(t);
      settled.set(t, (settled.get(t) ?? 0) + 1);
    }
  }
  return { settled, multiples };
}

describe('RabbitMQ acknowledgements coalesced with multiple', { skip: rabbit.skip }, () => {
  const url = rabbit.url!;
  let raw: Raw;
  const created: string[] = [];
  const queue = (prefix: string) => {
    const name = uniqueQueue(prefix);
    created.push(name, `${name}.dlq`);
    return name;
  };

  before(async () => {
    raw = await Raw.open(url);
  });
  after(async () => {
    await raw.cleanup(...created);
    await raw.close();
  });

  /** Publishes `n` messages (body: their index), confirmed. */
  async function fill(q: string, n: number): Promise<void> {
    await raw.channel.assertQueue(q, { durable: true });
    const confirm = await raw.model.createConfirmChannel();
    try {
      for (let i = 0; i < n; i++) confirm.sendToQueue(q, Buffer.from(String(i)), { persistent: true });
      await confirm.waitForConfirms();
    } finally {
      await confirm.close();
    }
  }

  /** Opens a channel holding all `n` messages of `q` unacknowledged, the consumer cancelled (nothing more arrives). */
  async function hold(q: string, n: number) {
    const channel = await raw.model.createChannel();
    const lane = { channel, closed: false };
    const errors: string[] = [];
    channel.on('error', (error: Error) => errors.push(error.message));
    channel.once('close', () => (lane.closed = true));
    await channel.prefetch(n);
    const messages: ConsumeMessage[] = [];
    const { consumerTag } = await channel.consume(q, (message) => void (message && messages.push(message)), { noAck: false });
    await until(() => messages.length === n, WAIT_MS, `all ${n} deliveries`);
    await channel.cancel(consumerTag);
    return { channel, lane, errors, messages };
  }

  it('settled out of order around an open delivery and two nacks: each tag settled exactly once, the open one never covered', async () => {
    const q = queue('bq-rmq-acker-order');
    const n = 40;
    await fill(q, n);
    const { channel, lane, errors, messages } = await hold(q, n);
    try {
      const sent = record(channel);
      const lost: unknown[] = [];
      const acker = new Acker(lane, (_what, error) => lost.push(error));
      const tickets = messages.map((message) => acker.track(message));
      const SLOW = 10;
      const REJECTED = 20;
      const REQUEUED = 25;
      // Out of order, in three flushes; 10 stays open throughout.
      const order = [39, 3, 0, 17, 1, 2, 22, 5, 4, 9, 8, 7, 6, 30, 11, 12, 31, 13, 14, 15, 16, 18, 19, 21, 23, 24, 26, 27, 28, 29, 32, 33, 34, 35, 36, 37, 38];
      assert.equal(new Set([...order, SLOW, REJECTED, REQUEUED]).size, n, 'the test settles every delivery once');
      acker.nack(tickets[REJECTED]!, false);
      for (const i of order.slice(0, 10)) acker.ack(tickets[i]!);
      acker.flush();
      acker.nack(tickets[REQUEUED]!, true);
      for (const i of order.slice(10, 25)) acker.ack(tickets[i]!);
      acker.flush();
      for (const i of order.slice(25)) acker.ack(tickets[i]!);
      await new Promise((resolve) => setImmediate(resolve)); // the acker's own flush
      const beforeSlow = replay(messages.map((m) => m.fields.deliveryTag), sent);
      assert.equal(beforeSlow.settled.has(messages[SLOW]!.fields.deliveryTag), false, 'the open delivery was never covered');
      assert.equal(beforeSlow.settled.size, n - 1, 'every other delivery is settled');
      assert.ok(beforeSlow.multiples > 0, 'acks below the open delivery were coalesced with multiple');

      acker.ack(tickets[SLOW]!);
      acker.ack(tickets[SLOW]!); // a second settlement of the same delivery sends nothing
      acker.flush();
      const all = replay(messages.map((m) => m.fields.deliveryTag), sent);
      assert.deepEqual([...all.settled.values()].filter((times) => times !== 1), [], 'each tag settled exactly once');
      assert.equal(all.settled.size, n);

      // The broker agrees: no channel error (an ack of a tag already settled closes the channel),
      // and only the requeued message is back on the queue.
      await raw.waitForCount(q, 1, WAIT_MS);
      assert.deepEqual(errors, []);
      assert.deepEqual(lost, []);
      await channel.close();
      const left = await raw.drain(q);
      assert.deepEqual(left.map((m) => m.content.toString()), [String(REQUEUED)]);
    } finally {
      await channel.close().catch(() => undefined);
    }
  });

  it('a channel closed with acks pending sends none of them: RabbitMQ redelivers every message (at-least-once)', async () => {
    const q = queue('bq-rmq-acker-close');
    const n = 5;
    await fill(q, n);
    const { channel, lane, messages } = await hold(q, n);
    const lost: string[] = [];
    const acker = new Acker(lane, (what) => lost.push(what));
    const tickets = messages.map((message) => acker.track(message));
    for (const ticket of tickets) acker.ack(ticket);
    // The channel goes before the acks' turn comes.
    await channel.close();
    acker.flush();
    await raw.waitForCount(q, n, WAIT_MS);
    const back = await raw.drain(q);
    assert.deepEqual(back.map((m) => m.content.toString()).sort(), ['0', '1', '2', '3', '4']);
    assert.ok(back.every((m) => m.fields.redelivered), 'each came back as a redelivery');
  });

  it('App: concurrent deliveries settled out of order with a slow one in the middle — each handled and acked once, the slow one holds only its own slot, nothing redelivered after a clean stop', async () => {
    const q = queue('bq-rmq-acker-app');
    const n = 300;
    const SLOW = 3;
    const producer = new RabbitMqTransport({ url, logger: captureLogger() });
    try {
      for (let i = 0; i < n; i++) {
        const { body, projection } = envelope(URN, { i }, q);
        await producer.publish({ body, queue: q, projection });
      }
    } finally {
      await producer.close();
    }

    const logger = captureLogger();
    const app = createApp({ transport: new RabbitMqTransport({ url, prefetch: 16, logger }), queue: q, logger, deadLetter: true });
    const seen = new Map<number, number>();
    let others = 0;
    let released!: () => void;
    const othersDone = new Promise<void>((resolve) => (released = resolve));
    const multiples: number[] = [];
    // Every consumer channel in this process: count the coalesced acks (they still go to the broker).
    const proto = Object.getPrototypeOf(raw.channel) as Channel;
    const ack = proto.ack;
    proto.ack = function (this: Channel, message, multiple = false) {
      if (multiple) multiples.push(message.fields.deliveryTag);
      ack.call(this, message, multiple);
    };
    try {
      app.handle(URN, async (data) => {
        const i = Number(data.i);
        seen.set(i, (seen.get(i) ?? 0) + 1);
        if (i === SLOW) {
          // Settles only once every other message was handled: 15 slots must keep the rest moving.
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([othersDone, new Promise((resolve) => (timer = setTimeout(resolve, WAIT_MS)))]);
          clearTimeout(timer);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, (i * 7) % 5));
        if (++others === n - 1) released();
      });
      assert.equal(await app.consume({ maxMessages: n, concurrency: 16, idleMs: WAIT_MS }), n);
      assert.equal(others, n - 1, 'the others finished while the slow one waited');
    } finally {
      proto.ack = ack;
      await app.close();
    }
    assert.equal(seen.size, n);
    assert.deepEqual([...seen.values()].filter((times) => times !== 1), [], 'each handled exactly once');
    assert.deepEqual(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error'), [], 'no settlement lost, no channel error');
    assert.ok(multiples.length > 0, 'acks were coalesced with multiple');
    assert.equal(await raw.count(q), 0, 'nothing left unacknowledged to be redelivered');
  });
});
