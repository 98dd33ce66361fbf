import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { Cluster } from 'ioredis';
import { createApp } from '@babelqueue/core';
import { CrossSlotError, legacyCleanup, RedisTransport, redisTransportFromUrl, type RedisLayout } from '../src/index.js';
import { broker, captureLogger, closeTransports, track, uniqueQueue } from './support/redis.js';
import { within } from '../../../test/support/until.js';

const b = broker('redis-cluster');
const URN = 'urn:babel:orders:created';

describe('redis cluster', { skip: b.skip }, () => {
  let cluster: Cluster;
  before(() => {
    const { hostname, port } = new URL(b.url!);
    cluster = new Cluster([{ host: hostname, port: Number(port) }], { slotsRefreshTimeout: 10_000 });
    cluster.on('error', () => undefined); // a refresh failing under load is retried; the commands report
  });
  after(async () => {
    await cluster.quit();
  });
  afterEach(closeTransports);

  const slot = async (key: string) => Number(await cluster.call('CLUSTER', 'KEYSLOT', key));

  for (const layout of ['legacy', 'zset'] as const) {
    const ready = (q: string) => (layout === 'zset' ? `queues:${q}` : q);

    it(`${layout}: a hash-tagged queue works end to end (publish, retry, dead-letter)`, async () => {
      const q = `{${uniqueQueue(`c-${layout}`)}}`;
      const logger = captureLogger();
      const transport = track(new RedisTransport({ url: b.url!, cluster: true, layout, logger }));
      const app = createApp({ transport, queue: q, logger, maxAttempts: 2, deadLetter: true });
      const seen: number[] = [];
      app.handle(URN, (_d, m) => {
        seen.push(m.attempts);
        throw new Error('always');
      });
      await app.publish(URN, { n: 1 });
      await cluster.rpush(ready(q), 'poison');
      // Three deliveries: the message, the poison, the message's retry. The bound only ends a failing run.
      await app.consume({ maxMessages: 3, idleMs: 30_000 });
      assert.deepEqual(seen, [1, 2]);
      const records = (await cluster.lrange(ready(`${q}.dlq`), 0, -1)).map((r) => (JSON.parse(r) as { dead_letter: { reason: string } }).dead_letter.reason);
      assert.deepEqual(records.sort(), ['failed', 'poison']);
      await app.close();
    });

    it(`${layout}: an untagged queue surfaces CROSSSLOT as a clear error naming the hash-tag fix`, async () => {
      const q = uniqueQueue(`c-untagged-${layout}`);
      const [k1, k2] = layout === 'zset' ? [`queues:${q}`, `queues:${q}:notify`] : [q, `${q}:processing`];
      assert.notEqual(await slot(k1), await slot(k2), 'precondition: the keys sit in different slots');
      const transport = track(new RedisTransport({ url: b.url!, cluster: true, layout, logger: captureLogger() }));
      const isFix = (e: unknown) =>
        e instanceof CrossSlotError && e.queue === q && e.message.includes(`"{${q}}"`) && /hash tag/.test(e.message);
      if (layout === 'zset') {
        await assert.rejects(transport.publish({ body: Buffer.from('{}'), queue: q, projection: {} as never }), isFix);
      } else {
        await transport.publish({ body: Buffer.from('{}'), queue: q, projection: {} as never });
      }
      await assert.rejects(
        transport.consume(q, async () => {}, { concurrency: 1, signal: new AbortController().signal, idleMs: 1000 }),
        isFix,
      );
      await transport.close();
      await cluster.del(q);
    });

    it(`${layout}: a DLQ outside the queue's slot fails the write clearly and leaves the message reserved`, async () => {
      const q = `{${uniqueQueue(`c-dlqslot-${layout}`)}}`;
      const logger = captureLogger();
      const transport = track(new RedisTransport({ url: b.url!, cluster: true, layout, logger, retryAfter: 60 }));
      const app = createApp({ transport, queue: q, logger, deadLetter: { queue: 'elsewhere-dlq' } });
      await cluster.rpush(ready(q), 'poison');
      await app.consume({ maxMessages: 1, idleMs: 30_000 });
      const line = logger.lines.find((l) => l.message.startsWith('dead-letter write failed'));
      assert.ok(line, "line");
      assert.match(String(line.fields.error), /CrossSlotError: .*dead-letter queue "elsewhere-dlq".*hash tag/);
      const reservedKey = layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`;
      assert.equal(await cluster.zcard(reservedKey), 1);
      await cluster.del(reservedKey, `${q}:processing`);
      await app.close();
    });
  }

  it('legacyCleanup runs on a hash-tagged queue', async () => {
    const q = `{${uniqueQueue('c-cleanup')}}`;
    const transport = track(redisTransportFromUrl(`${b.url!}?cluster=1&retryAfter=null`, { logger: captureLogger() }));
    await transport.publish({ body: Buffer.from('{"n":1}'), queue: q, projection: {} as never });
    await transport.consume(q, async () => {}, { concurrency: 1, signal: new AbortController().signal, maxMessages: 1 });
    assert.equal(await legacyCleanup(cluster, q, { consumersStopped: true }), 1);
    assert.deepEqual(await cluster.lrange(q, 0, -1), ['{"n":1}']);
    await transport.close();
    await cluster.del(q);
  });

  it('a startup node slow to answer CLUSTER SLOTS (a busy host) still connects: the slots refresh waits longer than ioredis\' 1 s', async () => {
    // A relay in front of the startup node that holds every reply for 1.5 s, past ioredis'
    // default slotsRefreshTimeout: the transport must not give up on a slow but healthy cluster.
    const { hostname, port } = new URL(b.url!);
    const sockets = new Set<Socket>();
    const relay: Server = createServer((client) => {
      const upstream = netConnect(Number(port), hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => setTimeout(() => client.write(chunk), 1500));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayed = `redis://127.0.0.1:${(relay.address() as { port: number }).port}`;
    const transport = track(redisTransportFromUrl(`${relayed}?cluster=true`, { logger: captureLogger() }));
    try {
      const q = `{${uniqueQueue('c-slow')}}`;
      await within(transport.publish({ body: Buffer.from('{"n":1}'), queue: q, projection: {} as never }), 30_000, 'the publish through the slow node');
      assert.deepEqual(await cluster.lrange(q, 0, -1), ['{"n":1}']);
      await cluster.del(q);
    } finally {
      await transport.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });

  it('the layout option reaches the cluster transport from a URL', async () => {
    const transport = track(redisTransportFromUrl(`${b.url!}?cluster=true&layout=zset`, { logger: captureLogger() }));
    assert.equal(transport.layout, 'zset' satisfies RedisLayout);
    assert.ok(transport.client instanceof Cluster, "transport.client instanceof Cluster");
    await transport.close();
  });
});
