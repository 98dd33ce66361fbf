import { silentLogger } from '@babelqueue/core';
import { clusterNode, clusterUrl } from '../lab.js';
import artemis, { activeNode } from './artemis.js';
import type { BrokerDriver } from './driver.js';

/**
 * The Artemis row on the cluster lab: the artemis driver on a replicated
 * primary/backup pair (scripts/clusters.d/artemis-ha.sh), through the
 * failover URL. The node killed mid-stream is the active one (the primary,
 * node 1, unless the backup has taken over).
 */
const driver: BrokerDriver = {
  ...artemis,
  name: 'artemis-ha',
  description: 'ActiveMQ Artemis 2.40 over AMQP 1.0, a replicated primary/backup pair (failover URL)',
  cluster: 'artemis-ha',
  async nodeKill(queue) {
    const node = await activeNode({ url: clusterUrl('artemis-ha') as string, logger: silentLogger, queue, role: 'reader' as const });
    await clusterNode('kill-node', 'artemis-ha', String(node));
    await clusterNode('restore-node', 'artemis-ha', String(node));
    return `scripts/clusters kill-node artemis-ha ${node} (the active broker), then restore-node`;
  },
};

export default driver;
