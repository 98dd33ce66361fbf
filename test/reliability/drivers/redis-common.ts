import { Cluster, Redis } from 'ioredis';
import { legacyKeys, RedisTransport, zsetKeys, type RedisLayout } from '@babelqueue/redis';
import type { BrokerDriver, DriverTarget } from './driver.js';

/**
 * Seconds a reservation lasts: a killed worker's begun messages come back after this (plus one
 * sweep). Above the binding's 5 s read-ahead lease, so the chaos rows also kill workers holding
 * leased read-ahead (back within the lease, not after retryAfter); at 5 s or less it reads none ahead.
 */
const RETRY_AFTER_S = 8;

/** A Redis driver: the standalone lab broker or the cluster, either layout. */
export function redisDriver(spec: { name: string; layout: RedisLayout; cluster: boolean; description: string }): BrokerDriver {
  const { layout, cluster } = spec;
  const inspect = async <T>(target: DriverTarget, work: (redis: Redis | Cluster) => Promise<T>): Promise<T> => {
    const u = new URL(target.url);
    const redis = cluster
      ? new Cluster([{ host: u.hostname, port: Number(u.port) }], { lazyConnect: true, slotsRefreshTimeout: 10_000 })
      : new Redis(target.url, { lazyConnect: true, maxRetriesPerRequest: 3 });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      return await work(redis);
    } finally {
      redis.disconnect();
    }
  };
  return {
    name: spec.name,
    lab: cluster ? 'redis-cluster' : 'redis',
    description: spec.description,
    transport: (target) => new RedisTransport({ url: target.url, cluster, layout, retryAfter: RETRY_AFTER_S, logger: target.logger }),
    // Every key of a queue must share one hash slot on a cluster (and the DLQ's: `{q}.dlq`).
    queue: (base) => (cluster ? `{${base}}` : base),
    leftover: (target, queue) => inspect(target, async (redis): Promise<Record<string, number>> => {
      if (layout === 'legacy') {
        const keys = legacyKeys(queue);
        return {
          ready: await redis.llen(keys.ready),
          reserved: await redis.llen(keys.processing),
          deadlines: await redis.zcard(keys.deadlines),
        };
      }
      const keys = zsetKeys('', queue);
      return {
        ready: await redis.llen(keys.ready),
        delayed: await redis.zcard(keys.delayed),
        reserved: await redis.zcard(keys.reserved),
      };
    }),
    // The lab cluster's three masters listen on consecutive ports.
    ports: (url) => (cluster ? [0, 1, 2].map((i) => Number(new URL(url).port) + i) : [Number(new URL(url).port)]),
    // CLIENT KILL on every node: each client connection is closed by the server.
    cut: (target) => inspect(target, async (redis) => {
      const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
      let killed = 0;
      for (const node of nodes) killed += Number(await node.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      return `CLIENT KILL TYPE normal on ${nodes.length} node(s): ${killed} connection(s)`;
    }),
    cleanup: (target, queues) => inspect(target, async (redis) => {
      for (const queue of queues) {
        const keys = layout === 'legacy' ? Object.values(legacyKeys(queue)) : Object.values(zsetKeys('', queue));
        for (const key of keys) await redis.del(key);
      }
    }),
    chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: (RETRY_AFTER_S + 2) * 1000 },
    maxBodyBytes: 4 << 20,
  };
}
