// amqplib writes each queued frame to the socket by itself; the binding corks
// the socket for each pass of amqplib's muxer (src/frame-writes.ts), so the
// frames queued in one turn leave in one system call.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Socket } from 'node:net';
import { createApp, silentLogger } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { writeFramesTogether } from '../src/frame-writes.js';
import { countSystemWrites } from '../../../test/support/system-writes.js';
import { envelope, rabbit, Raw, uniqueQueue } from './support/rabbit.js';

const URN = 'urn:babel:orders:created';

describe('RabbitMQ frames of one muxer pass leave in one write', { skip: rabbit.skip }, () => {
  const url = rabbit.url!;
  const port = Number(new URL(url).port || 5672);
  /** Every socket to the broker: the transport's own cannot be reached from here. */
  const toBroker = (socket: Socket) => socket.remotePort === port;
  const created: string[] = [];
  let raw: Raw | undefined;
  after(async () => {
    await raw?.cleanup(...created);
    await raw?.close();
  });

  it('forty messages sent in one tick reach the socket as one or two writes, and all forty arrive intact, in order', async () => {
    raw = await Raw.open(url);
    const queue = uniqueQueue('bq-rmq-frames');
    created.push(queue);
    await raw.channel.assertQueue(queue, { durable: true });
    writeFramesTogether(raw.model);
    const socket = (raw.model as unknown as { connection: { stream: Socket } }).connection.stream;
    const writes = countSystemWrites((each) => each === socket);
    try {
      for (let i = 0; i < 40; i++) raw.channel.sendToQueue(queue, Buffer.from(`{"i":${i}}`));
      await raw.channel.checkQueue(queue); // a round trip: the forty went out before its answer came
    } finally {
      writes.stop();
    }
    // Without the cork, amqplib writes each message's frames by itself: forty system calls.
    assert.ok(writes.count <= 3, `${writes.count} writes for forty messages and a queue check`);
    const bodies = (await raw.drain(queue)).map((message) => message.content.toString());
    assert.deepEqual(bodies, Array.from({ length: 40 }, (_, i) => `{"i":${i}}`));
  });

  it('the transport: forty confirmed publishes made together go out in a few writes, and a get-mode poller sends its ack and its next get in one', async () => {
    raw ??= await Raw.open(url);
    const queue = uniqueQueue('bq-rmq-frames-app');
    created.push(queue);
    const transport = new RabbitMqTransport({ url, mode: 'get', logger: silentLogger });
    const app = createApp({ transport, queue, logger: silentLogger });
    try {
      const first = envelope(URN, { i: -1 }, queue);
      await transport.publish({ body: first.body, queue, projection: first.projection }); // connects, declares, opens the confirm channel
      const published = countSystemWrites(toBroker);
      try {
        await Promise.all(Array.from({ length: 40 }, (_, i) => {
          const { body, projection } = envelope(URN, { i }, queue);
          return transport.publish({ body, queue, projection });
        }));
      } finally {
        published.stop();
      }
      assert.ok(published.count <= 3, `${published.count} writes for forty publishes`);

      const seen: number[] = [];
      app.handle(URN, (data: { i: number }) => {
        seen.push(data.i);
      });
      const polled = countSystemWrites(toBroker);
      try {
        await app.consume({ maxMessages: 41, concurrency: 1, idleMs: 5000 });
      } finally {
        polled.stop();
      }
      assert.deepEqual(seen, Array.from({ length: 41 }, (_, i) => i - 1));
      // Each message costs a basic.get and its ack: 88 writes without the cork, 47 with it.
      assert.ok(polled.count <= 60, `${polled.count} writes to take and ack 41 messages one at a time`);
    } finally {
      await app.close();
    }
    assert.equal(await raw.count(queue), 0, 'every message acknowledged');
  });
});
