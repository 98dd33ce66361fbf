// Pulsar's WebSocket service subscribes a consumer before it answers the
// upgrade; a client that goes away in between (killed, cut off, timed out)
// leaves that consumer alive in the broker with no socket (apache/pulsar#4098)
// until the broker restarts. These tests make such consumers out of the
// transport's own requests, through a relay that drops the client while the
// broker is still subscribing, then check that nothing is stranded with them.
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { createApp, silentLogger, type Logger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { until } from '../../../test/support/until.js';
import { captureLogger, envelope, lab, RawPulsar, sleep, uniqueQueue } from './support/pulsar.js';

const URN = 'urn:babel:orders:created';

/** Publishes `count` envelopes to `queue` with a transport of its own; resolves with their message ids. */
async function publishEnvelopes(url: string, queue: string, count: number): Promise<Set<string>> {
  const producer = new PulsarTransport({ url, logger: silentLogger });
  const ids = new Set<string>();
  for (let i = 0; i < count; i++) {
    const { body, projection } = envelope(URN, { i }, queue);
    ids.add(projection.messageId);
    await producer.publish({ body, queue, projection });
  }
  await producer.close();
  return ids;
}

/** Runs an App on `transport` until `count` distinct messages were handled; resolves with their ids. */
async function handleAll(transport: PulsarTransport, queue: string, logger: Logger, concurrency: number, count: number, timeoutMs = 60_000, note = ''): Promise<Set<string>> {
  const app = createApp({ transport, queue, logger });
  const handled = new Set<string>();
  app.handle(URN, async (_data, message) => {
    handled.add(message.id);
  });
  const stop = new AbortController();
  const run = app.run({ concurrency, signal: stop.signal });
  try {
    await until(() => handled.size === count, timeoutMs, `${count} handled${note}`);
  } catch (error) {
    (error as Error).message += ` (${handled.size} so far)`;
    throw error;
  } finally {
    stop.abort();
    await run;
  }
  return handled;
}

/**
 * A relay to the web service that forwards each consumer upgrade request and
 * then, a few ms later (0–14, in turn), drops both sides before the answer
 * comes back: the client is gone while the broker subscribes.
 */
class HandshakeDropper {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private turn = 0;
  port = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 8080), this.target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      const delay = this.turn++ % 15;
      client.once('data', (request) => {
        upstream.write(request);
        setTimeout(() => {
          client.resetAndDestroy();
          upstream.resetAndDestroy();
        }, delay);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

describe('Pulsar consumers the WebSocket service leaks', { skip: lab.skip }, () => {
  const url = lab.url!;
  const raw = new RawPulsar(url);
  const created: string[] = [];
  after(() => raw.cleanup(created));

  it('a consumer leaked by a client gone mid-handshake holds no message: every message still reaches a live consumer', async () => {
    const q = uniqueQueue('bq-pulsar-leak');
    created.push(q);
    await raw.subscribe(q);

    // The transport's own consumer requests, each dropped (reset) while the
    // broker subscribes, in rounds until the broker keeps a consumer no socket owns.
    // Each round's dropper is stopped (its sockets destroyed) before the count: a
    // consumer whose socket was still open then goes, only a leaked one stays. The
    // broker may list a closing one for a moment more, so the count is read twice.
    let leaked = 0;
    await until(async () => {
      const dropper = new HandshakeDropper(new URL(url));
      await dropper.start();
      const dropped = new PulsarTransport({ url: `http://127.0.0.1:${dropper.port}`, reconnect: { initialDelayMs: 5, maxDelayMs: 20 }, logger: silentLogger });
      const quit = new AbortController();
      const consuming = dropped.consume(q, async () => assert.fail('no socket ever opens through the dropper'), { concurrency: 8, signal: quit.signal });
      await sleep(1000);
      quit.abort();
      await consuming;
      await dropped.close();
      await dropper.stop();
      await sleep(500);
      if ((await raw.consumers(q)).length === 0) return false;
      await sleep(1000);
      leaked = (await raw.consumers(q)).length;
      return leaked > 0;
    }, 90_000, 'the broker to keep a leaked consumer');

    const ids = await publishEnvelopes(url, q, 40);
    // With a receiver queue, each leaked consumer would keep some of these for good.
    const handled = await handleAll(new PulsarTransport({ url, logger: silentLogger }), q, silentLogger, 8, 40, 60_000, `, ${leaked} leaked consumers on the subscription`);
    assert.deepEqual([...handled].sort(), [...ids].sort());
  });

  it('a producer\'s batch, which a zero-queue consumer cannot take: the loop notices the silent socket and prefetches, nothing is stranded', async () => {
    const q = uniqueQueue('bq-pulsar-batch');
    created.push(q);
    const bodies = Array.from({ length: 6 }, (_, i) => envelope(URN, { i }, q));
    await raw.publishBatch(q, bodies.map(({ body }) => body));

    const logger = captureLogger();
    const handled = await handleAll(new PulsarTransport({ url, consumerCheckMs: 300, logger }), q, logger, 4, 6, 60_000, ' (the batch)');
    assert.deepEqual([...handled].sort(), bodies.map(({ projection }) => projection.messageId).sort());
    assert.ok(logger.lines.some((line) => line.level === 'warn' && /prefetch from now on: a producer's batch/.test(line.message)), 'the switch is logged');
    await raw.waitForBacklog(q, 0);
  });

  it('a partitioned topic, which has no zero-queue consumer: the loop prefetches and consumes it', async () => {
    const q = uniqueQueue('bq-pulsar-partitioned');
    created.push(q);
    const res = await fetch(`${url}/admin/v2/persistent/public/default/${q}/partitions`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '2' });
    assert.equal(res.status, 204, `create partitioned topic: HTTP ${res.status}`);
    const ids = await publishEnvelopes(url, q, 10);
    const logger = captureLogger();
    const handled = await handleAll(new PulsarTransport({ url, logger }), q, logger, 4, 10, 60_000);
    assert.deepEqual([...handled].sort(), [...ids].sort());
    assert.ok(logger.lines.some((line) => line.level === 'warn' && /prefetch from now on: the topic is partitioned/.test(line.message)), 'the switch is logged');
  });

  it('a topic unload leaves a zero-queue consumer without permits (apache/pulsar#15679): the loop reopens its socket, and what comes after is consumed', async () => {
    const q = uniqueQueue('bq-pulsar-unload');
    created.push(q);
    const logger = captureLogger();
    const transport = new PulsarTransport({ url, consumerCheckMs: 300, logger });
    const app = createApp({ transport, queue: q, logger });
    const handled: number[] = [];
    app.handle(URN, async (data: { n: number }) => {
      handled.push(data.n);
    });
    const stop = new AbortController();
    const run = app.run({ concurrency: 2, signal: stop.signal });
    try {
      await app.publish(URN, { n: 1 });
      await until(() => handled.includes(1), 60_000, 'the first message handled');
      // The unload must meet both consumers holding their permit inside the broker: a permit
      // granted after it (the first socket's, once its message settled) reaches the new consumer.
      await until(async () => {
        const permits = await raw.permits(q);
        return permits.length === 2 && permits.every((n) => n >= 1);
      }, 60_000, 'both consumers holding a permit inside the broker');
      const res = await fetch(`${url}/admin/v2/persistent/public/default/${q}/unload`, { method: 'PUT' });
      assert.equal(res.status, 204, `unload: HTTP ${res.status}`);
      await app.publish(URN, { n: 2 });
      await until(() => handled.includes(2), 60_000, 'the message published after the unload handled');
    } finally {
      stop.abort();
      await run;
    }
    assert.ok(logger.lines.some((line) => line.level === 'warn' && /lost its permits inside the broker/.test(line.message)), 'the reopening is logged');
    assert.ok(
      !logger.lines.some((line) => /prefetch from now on/.test(line.message)),
      'a consumer unlisted while the service reconnects it is not taken for one a batch closed',
    );
  });
});
