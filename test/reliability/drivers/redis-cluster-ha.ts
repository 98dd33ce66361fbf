import type { RedisLayout } from '@babelqueue/redis';
import { clusterNode, run, ROOT } from '../lab.js';
import type { BrokerDriver } from './driver.js';
import { redisDriver } from './redis-common.js';
import { join } from 'node:path';

/** A Redis Cluster row on the cluster lab's six nodes (three masters with a replica each). */
function clusterHaDriver(layout: RedisLayout): BrokerDriver {
  const base = redisDriver({ name: `redis-cluster-ha-${layout}`, layout, cluster: true, description: '' });
  return {
    ...base,
    cluster: 'redis-cluster-ha',
    description: `Redis 7 Cluster, three masters with a replica each, ${layout} layout, retryAfter 8 s; the master of the queue's slot SIGKILLed and restored mid-stream`,
    // The queue's keys share its hash tag, so one master serves them all: that one is killed.
    async nodeKill(queue) {
      const out = await run(join(ROOT, 'scripts/clusters'), ['kill-node', 'redis-cluster-ha', `master-of:${queue}`]);
      const node = /node (\d) killed/.exec(out)?.[1];
      if (node === undefined) throw new Error(`kill-node did not name the node it killed: ${out}`);
      await clusterNode('restore-node', 'redis-cluster-ha', node);
      return `scripts/clusters kill-node redis-cluster-ha ${node} (the master of the queue's slot), then restore-node (back as a replica)`;
    },
    ports: () => [7101, 7102, 7103, 7104, 7105, 7106],
  };
}

export const legacy = clusterHaDriver('legacy');
export const zset = clusterHaDriver('zset');
