import { connect, type Channel } from 'amqplib';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { clusterNode } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

/** The single-host URLs of the cluster's host list (`amqp://u:p@h1,h2,h3/`). */
function hosts(url: string): string[] {
  const m = /^(amqps?:\/\/(?:[^@/]*@)?)([^/?#]*)(.*)$/.exec(url);
  return m === null ? [url] : (m[2] as string).split(',').map((host) => `${m[1]}${host}${m[3]}`);
}

/** An amqplib channel on the first node that answers, for looking at the cluster from outside the binding. */
async function inspect<T>(target: DriverTarget, work: (channel: Channel) => Promise<T>): Promise<T> {
  let last: unknown;
  for (const url of hosts(target.url)) {
    let model;
    try {
      model = await connect(url);
    } catch (error) {
      last = error;
      continue;
    }
    model.on('error', () => undefined);
    try {
      const channel = await model.createChannel();
      channel.on('error', () => undefined);
      return await work(channel);
    } finally {
      await model.close().catch(() => undefined);
    }
  }
  throw last;
}

const driver: BrokerDriver = {
  name: 'rabbitmq-ha',
  lab: 'rabbitmq',
  cluster: 'rabbitmq-ha',
  description: 'three clustered RabbitMQ 3.10 nodes, quorum queues, the host list in the URL; node 1 (the queue\'s leader) SIGKILLed and restored mid-stream',
  transport: (target) => new RabbitMqTransport({
    url: target.url,
    queueType: 'quorum',
    publishWhileDisconnected: 'wait',
    logger: target.logger,
    reconnect: { initialDelayMs: 100, maxDelayMs: 2000, multiplier: 2 },
  }),
  queue: (base) => base,
  // The queues are declared through node 1, the head of the host list, so their leader is
  // there (RabbitMQ places a quorum queue's leader on the declaring client's node).
  async nodeKill() {
    await clusterNode('kill-node', 'rabbitmq-ha', '1');
    await clusterNode('restore-node', 'rabbitmq-ha', '1');
    return 'scripts/clusters kill-node rabbitmq-ha 1 (the queue\'s leader, every client\'s first host), then restore-node';
  },
  leftover: async (target, queue) => ({
    ready: await inspect(target, async (channel) => (await channel.checkQueue(queue)).messageCount).catch(() => 0),
  }),
  ports: () => [5691, 5692, 5693],
  // Never called: a cluster row's cut is `ss -K` on the run's own connections.
  cut: () => Promise.reject(new Error('rabbitmq-ha is cut with ss -K')),
  cleanup: (target, queues) => inspect(target, async (channel) => {
    for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined);
  }),
  chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: 5_000 },
  maxBodyBytes: 4 << 20,
};

export default driver;
