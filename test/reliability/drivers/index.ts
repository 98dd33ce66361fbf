import type { BrokerDriver } from './driver.js';

/**
 * Every broker the suite runs, in report order: one file per driver. Loaded
 * lazily, so a worker process loads only its own binding.
 */
export const DRIVERS: Readonly<Record<string, () => Promise<{ default: BrokerDriver }>>> = {
  'redis-legacy': () => import('./redis-legacy.js'),
  'redis-zset': () => import('./redis-zset.js'),
  'redis-cluster': () => import('./redis-cluster.js'),
  rabbitmq: () => import('./rabbitmq.js'),
  kafka: () => import('./kafka.js'),
  sqs: () => import('./sqs.js'),
  pulsar: () => import('./pulsar.js'),
  'pulsar-binary': () => import('./pulsar-binary.js'),
  artemis: () => import('./artemis.js'),
  asb: () => import('./asb.js'),
};

/**
 * Rows on the cluster lab (scripts/clusters, `--cluster`): a broker's driver on
 * one of its clusters, with the node to kill mid-stream.
 */
export const CLUSTER_DRIVERS: Readonly<Record<string, () => Promise<{ default: BrokerDriver }>>> = {
  'rabbitmq-ha': () => import('./rabbitmq-ha.js'),
  'redis-sentinel-legacy': () => import('./redis-sentinel.js').then((m) => ({ default: m.legacy })),
  'redis-sentinel-zset': () => import('./redis-sentinel.js').then((m) => ({ default: m.zset })),
  'redis-cluster-ha-legacy': () => import('./redis-cluster-ha.js').then((m) => ({ default: m.legacy })),
  'redis-cluster-ha-zset': () => import('./redis-cluster-ha.js').then((m) => ({ default: m.zset })),
  'kafka-ha': () => import('./kafka-ha.js'),
  'artemis-ha': () => import('./artemis-ha.js'),
};

export async function loadDriver(name: string): Promise<BrokerDriver> {
  const load = DRIVERS[name] ?? CLUSTER_DRIVERS[name];
  if (load === undefined) throw new Error(`unknown driver "${name}" (one of: ${[...Object.keys(DRIVERS), ...Object.keys(CLUSTER_DRIVERS)].join(', ')})`);
  return (await load()).default;
}
