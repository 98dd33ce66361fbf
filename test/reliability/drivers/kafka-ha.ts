import { silentLogger } from '@babelqueue/core';
import { clusterNode, clusterUrl } from '../lab.js';
import kafka, { admin } from './kafka.js';
import type { BrokerDriver } from './driver.js';

/**
 * The Kafka row on the cluster lab: the kafka driver's binding settings on
 * three KRaft nodes (scripts/clusters.d/kafka-ha.sh: replication factor 3,
 * min.insync.replicas=2). The node killed mid-stream is the leader of the work
 * topic's partition 0 (node ids are the lab's node numbers).
 */
const driver: BrokerDriver = {
  ...kafka,
  name: 'kafka-ha',
  description: `Kafka 4.4 (KRaft), three nodes, RF 3, min.insync.replicas=2; ${kafka.description.replace(/^Kafka 4\.4 \(KRaft\), /, '')}`,
  cluster: 'kafka-ha',
  async nodeKill(queue) {
    const target = { url: clusterUrl('kafka-ha') as string, logger: silentLogger, queue, role: 'reader' as const };
    const leader = await admin(target, async (client) => {
      const { topics } = await client.fetchTopicMetadata({ topics: [queue] });
      const node = topics[0]?.partitions.find((p) => p.partitionId === 0)?.leader;
      if (node === undefined || node < 0) throw new Error(`${queue}: partition 0 has no leader`);
      return node;
    });
    await clusterNode('kill-node', 'kafka-ha', String(leader));
    await clusterNode('restore-node', 'kafka-ha', String(leader));
    return `scripts/clusters kill-node kafka-ha ${leader} (partition 0's leader), then restore-node`;
  },
};

export default driver;
