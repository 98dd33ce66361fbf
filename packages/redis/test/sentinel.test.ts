/**
 * The Redis binding behind Sentinel (`scripts/clusters up redis-sentinel`,
 * issue #30): the `redis+sentinel://` URL form, and the primary SIGKILLed
 * mid-stream on both layouts — publishing and consuming resume against the
 * promoted replica and nothing acknowledged is lost.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createApp, transportFromUrl as coreTransportFromUrl } from '@babelqueue/core';
import { cluster, clusterNode } from '../../../test/support/clusters.js';
import { RedisConfigError, RedisTransport, redisTransportFromUrl, ReplicationTimeoutError } from '../src/index.js';
import { connect } from '../src/connection.js';
import { disconnectClient } from '../src/revive.js';
import { parseSentinelUrl } from '../src/sentinel.js';
import { captureLogger, closeTransports, track, uniqueQueue, until } from './support/redis.js';

const URN = 'urn:babel:orders:created';

describe('redis+sentinel:// URL form', () => {
  it('names the Sentinels, the master, the db and the credentials', () => {
    assert.deepEqual(parseSentinelUrl('redis+sentinel://user:p%40ss@10.0.0.1:26379,10.0.0.2,[::1]:26380/mymaster/2?sentinelPassword=s'), {
      sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26379 }, { host: '::1', port: 26380 }],
      name: 'mymaster',
      db: 2,
      username: 'user',
      password: 'p@ss',
      sentinelPassword: 's',
    });
  });

  it('refuses a URL without a master name, or with a bad path, without repeating the password', () => {
    assert.throws(() => parseSentinelUrl('redis+sentinel://u:s3cret@h1:26379,h2:26379'), (e: unknown) =>
      e instanceof RedisConfigError && /names the master/.test(e.message) && !e.message.includes('s3cret'));
    assert.throws(() => parseSentinelUrl('redis+sentinel://h1:26379/m/x'), /\/<master name>\[\/<db number>\]/);
    assert.throws(() => redisTransportFromUrl('redis+sentinel://h1:26379/m?cluster=1'), /not a Redis Cluster/);
  });

  it('the transport from the URL reads its options from the query and masks the password in its target', async () => {
    const t = track(redisTransportFromUrl('redis+sentinel://u:s3cret@127.0.0.1:1,127.0.0.1:2/m?layout=zset&waitForReplicas=2', { logger: captureLogger() }));
    assert.equal(t.layout, 'zset');
    assert.equal(t.target, 'redis+sentinel://u:***@127.0.0.1:1,127.0.0.1:2/m (zset layout)');
    await closeTransports();
  });
});

const sentinel = cluster('redis-sentinel');

describe('Redis behind Sentinel (redis-sentinel)', { skip: sentinel.skip }, () => {
  const url = sentinel.url!;
  afterEach(closeTransports);

  /** The node (1-3) Sentinel reports as the primary now. */
  async function primaryNode(): Promise<string> {
    const s = new Redis({ host: '127.0.0.1', port: 26391, lazyConnect: true });
    try {
      await s.connect();
      const [, port] = (await s.call('SENTINEL', 'get-master-addr-by-name', 'babelqueue')) as [string, string];
      return String(Number(port) - 6390);
    } finally {
      s.disconnect();
    }
  }

  it("is what the core's URL registry builds for redis+sentinel://", async () => {
    const t = await coreTransportFromUrl(url);
    assert.ok(t instanceof RedisTransport, 'a RedisTransport');
    track(t);
    await t.connect({ timeoutMs: 30_000 });
    await t.close();
  });

  it('a publish waits for its replicas (WAIT): more than there are is a ReplicationTimeoutError naming the counts', async () => {
    const q = uniqueQueue('bq-sentinel-wait');
    const t = track(new RedisTransport({ url, waitForReplicas: 3, waitForReplicasMs: 300, logger: captureLogger() }));
    await assert.rejects(t.publishRaw(q, Buffer.from('{"attempts":0}')), (error: Error) => {
      assert.ok(error instanceof ReplicationTimeoutError, `a ReplicationTimeoutError, got ${error.name}`);
      assert.match(error.message, /2 of the 3 replica\(s\) waitForReplicas asks for confirmed it within 300 ms/);
      return true;
    });
    // The default with Sentinel (one replica) resolves.
    const ok = track(new RedisTransport({ url, logger: captureLogger() }));
    await ok.publishRaw(q, Buffer.from('{"attempts":0}'));
    await t.purge(q);
  });

  it('ioredis ends the client when a failover notice meets its reconnect: it is connected again, and commands go on', async () => {
    const logger = captureLogger();
    const client = connect(url, false, logger) as Redis;
    try {
      assert.equal(await client.ping(), 'PONG');
      // What ioredis's failover detector does on +switch-master, landing while the
      // reconnect asks the Sentinels for the primary: the connector is disconnected.
      client.once('connecting', () => (client as unknown as { connector: { disconnect(): void } }).connector.disconnect());
      client.disconnect(true);
      await until(() => logger.lines.some((l) => /ended the Sentinel connection by itself/.test(l.message)), 20_000, 'the end is noticed');
      await until(() => client.status === 'ready', 20_000, 'connected again');
      assert.equal(await client.ping(), 'PONG');
    } finally {
      disconnectClient(client);
    }
  });

  it('a client closed while it connects leaves no Sentinel connection open (its failover detector goes with it)', async () => {
    /** This process's open sockets to the lab's Sentinels (ports 26391-26393). */
    const sentinelSockets = (): number =>
      // Undocumented but stable since Node 0.x; getActiveResourcesInfo() names no ports.
      (process as unknown as { _getActiveHandles(): Array<{ remotePort?: number; destroyed?: boolean }> })._getActiveHandles()
        .filter((h) => h.remotePort !== undefined && h.remotePort >= 26391 && h.remotePort <= 26393 && h.destroyed !== true).length;
    // Closed 0-9 ms after opening: some land while the stream to the primary is still connecting,
    // when ioredis has not started the detector it starts once that stream connects.
    for (let i = 0; i < 60; i++) {
      const client = connect(url, false, captureLogger());
      await new Promise((resolve) => setTimeout(resolve, i % 10));
      disconnectClient(client);
    }
    await until(() => sentinelSockets() === 0, 20_000, 'no socket to a Sentinel left open');
  });

  for (const layout of ['legacy', 'zset'] as const) {
    it(`${layout}: the primary SIGKILLed mid-stream — publishing and consuming resume on the promoted replica, nothing acknowledged is lost`, async () => {
      const q = uniqueQueue(`bq-sentinel-${layout}`);
      const N = 300;
      // retryAfter 5 s: a reservation whose reply died with the primary comes back quickly.
      const producer = track(new RedisTransport({ url, layout, logger: captureLogger() }));
      const consumer = track(new RedisTransport({ url, layout, retryAfter: 5, logger: captureLogger() }));
      const app = createApp({ transport: consumer, queue: q, logger: captureLogger() });
      const seen = new Set<number>();
      app.handle(URN, (data) => void seen.add((data as { n: number }).n));
      const stop = new AbortController();
      const running = app.run({ signal: stop.signal, concurrency: 4 });
      const publisher = createApp({ transport: producer, queue: q, logger: captureLogger() });
      let killed: string | undefined;
      try {
        await producer.connect({ timeoutMs: 30_000 });
        const acknowledged: number[] = [];
        for (let n = 0; n < N; n++) {
          if (n === N / 3) {
            killed = await primaryNode();
            await clusterNode('kill-node', 'redis-sentinel', killed);
          }
          // A publish that failed (the primary gone, not yet replaced) is published again, as a
          // caller would: only a resolved publish counts as acknowledged.
          await until(async () => {
            try {
              await publisher.publish(URN, { n });
              return true;
            } catch {
              return false;
            }
          }, 120_000, `publish ${n} to succeed`, 200);
          acknowledged.push(n);
        }
        await until(() => seen.size === N, 120_000, `all ${N} acknowledged messages consumed (have ${seen.size})`, 100);
        assert.deepEqual([...seen].sort((a, b) => a - b), acknowledged);
        assert.notEqual(await primaryNode(), killed, 'Sentinel promoted another node');
      } finally {
        stop.abort();
        await running.catch(() => undefined);
        await app.close();
        await publisher.close();
        if (killed !== undefined) await clusterNode('restore-node', 'redis-sentinel', killed);
      }
    });
  }
});
