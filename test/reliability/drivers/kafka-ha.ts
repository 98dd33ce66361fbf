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
  cluster: {
    name: 'kafka-ha',
    variable: 'BABELQUEUE_KAFKA_HA_URL',
    leader: (target, queue) => admin(target, async (client) => {
      const { topics } = await client.fetchTopicMetadata({ topics: [queue] });
      const leader = topics[0]?.partitions.find((p) => p.partitionId === 0)?.leader;
      if (leader === undefined || leader < 0) throw new Error(`${queue}: partition 0 has no leader`);
      return leader;
    }),
  },
};

export default driver;
