import { Redis } from 'ioredis';
import { legacyKeys, RedisTransport, zsetKeys, type RedisLayout } from '@babelqueue/redis';
import { clusterNode } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

/** As the single-node Redis rows: a killed worker's reservations come back after this. */
const RETRY_AFTER_S = 8;
const MASTER = 'babelqueue';
const SENTINELS = [26391, 26392, 26393].map((port) => ({ host: '127.0.0.1', port }));

/** A client of the current primary, found through the Sentinels. */
async function inspect<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ sentinels: SENTINELS, name: MASTER, lazyConnect: true, maxRetriesPerRequest: 3 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

/** The node (1-3) the Sentinels report as the primary now. */
async function primaryNode(): Promise<string> {
  const sentinel = new Redis({ ...SENTINELS[0], lazyConnect: true });
  sentinel.on('error', () => undefined);
  try {
    await sentinel.connect();
    const [, port] = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', MASTER)) as [string, string];
    return String(Number(port) - 6390);
  } finally {
    sentinel.disconnect();
  }
}

function sentinelDriver(layout: RedisLayout): BrokerDriver {
  return {
    name: `redis-sentinel-${layout}`,
    lab: 'redis',
    cluster: 'redis-sentinel',
    description: `Redis 7 primary, two replicas, three Sentinels (redis+sentinel://), ${layout} layout, retryAfter 8 s; the primary SIGKILLed and restored mid-stream`,
    transport: (target: DriverTarget) => new RedisTransport({ url: target.url, layout, retryAfter: RETRY_AFTER_S, logger: target.logger }),
    queue: (base) => base,
    async nodeKill() {
      const node = await primaryNode();
      await clusterNode('kill-node', 'redis-sentinel', node);
      await clusterNode('restore-node', 'redis-sentinel', node);
      return `scripts/clusters kill-node redis-sentinel ${node} (the primary), then restore-node (back as a replica)`;
    },
    leftover: (_target, queue) => inspect(async (redis): Promise<Record<string, number>> => {
      if (layout === 'legacy') {
        const keys = legacyKeys(queue);
        return { ready: await redis.llen(keys.ready), reserved: await redis.llen(keys.processing), deadlines: await redis.zcard(keys.deadlines) };
      }
      const keys = zsetKeys('', queue);
      return { ready: await redis.llen(keys.ready), delayed: await redis.zcard(keys.delayed), reserved: await redis.zcard(keys.reserved) };
    }),
    ports: () => [6391, 6392, 6393],
    cut: () => Promise.reject(new Error('redis-sentinel is cut with ss -K')),
    cleanup: (_target, queues) => inspect(async (redis) => {
      for (const queue of queues) {
        const keys = layout === 'legacy' ? Object.values(legacyKeys(queue)) : Object.values(zsetKeys('', queue));
        for (const key of keys) await redis.del(key);
      }
    }),
    chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: (RETRY_AFTER_S + 2) * 1000 },
    maxBodyBytes: 4 << 20,
  };
}

export const legacy = sentinelDriver('legacy');
export const zset = sentinelDriver('zset');
