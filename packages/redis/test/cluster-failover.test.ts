/**
 * The Redis binding on a Redis Cluster with replicas (`scripts/clusters up
 * redis-cluster-ha`, issue #30): the master serving the queue's slot is
 * SIGKILLed mid-stream on both layouts; its replica takes the slots over, and
 * publishing and consuming resume with nothing acknowledged lost.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createApp } from '@babelqueue/core';
import { cluster, clusterNode } from '../../../test/support/clusters.js';
import { redisTransportFromUrl } from '../src/index.js';
import { captureLogger, closeTransports, track, uniqueQueue, until } from './support/redis.js';

const URN = 'urn:babel:orders:created';
const ha = cluster('redis-cluster-ha');

describe('Redis Cluster with replicas (redis-cluster-ha)', { skip: ha.skip }, () => {
  const url = ha.url!;
  afterEach(closeTransports);

  for (const layout of ['legacy', 'zset'] as const) {
    it(`${layout}: the master of the queue's slot SIGKILLed mid-stream — its replica takes over, nothing acknowledged is lost`, async () => {
      // A hash tag: every key of the queue (and its DLQ) in one slot, so one master serves it.
      const q = `{${uniqueQueue(`bq-cluster-ha-${layout}`)}}`;
      const N = 300;
      const producer = track(redisTransportFromUrl(`${url}&layout=${layout}`, { logger: captureLogger() }));
      // retryAfter 5 s: a reservation whose reply died with the master comes back quickly.
      const consumer = track(redisTransportFromUrl(`${url}&layout=${layout}&retryAfter=5`, { logger: captureLogger() }));
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
            const out = await clusterNode('kill-node', 'redis-cluster-ha', `master-of:${layout === 'legacy' ? q : `queues:${q}`}`);
            killed = /node (\d) killed/.exec(out)?.[1];
            assert.ok(killed !== undefined, `the killed node is named: ${out}`);
          }
          // A publish that failed (its master gone, the replica not yet promoted) is published
          // again, as a caller would: only a resolved publish counts as acknowledged.
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
      } finally {
        stop.abort();
        await running.catch(() => undefined);
        await app.close();
        await publisher.close();
        if (killed !== undefined) await clusterNode('restore-node', 'redis-cluster-ha', killed);
      }
    });
  }
});
