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
  artemis: () => import('./artemis.js'),
  asb: () => import('./asb.js'),
};

export async function loadDriver(name: string): Promise<BrokerDriver> {
  const load = DRIVERS[name];
  if (load === undefined) throw new Error(`unknown driver "${name}" (one of: ${Object.keys(DRIVERS).join(', ')})`);
  return (await load()).default;
}
