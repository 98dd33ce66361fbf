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
  cluster: {
    name: 'artemis-ha',
    variable: 'BABELQUEUE_ARTEMIS_HA_URL',
    leader: (target) => activeNode(target),
  },
};

export default driver;
