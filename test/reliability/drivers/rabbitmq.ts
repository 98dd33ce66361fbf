import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { LAB_DIR, run } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

/** An amqplib channel for looking at the broker from outside the binding. */
async function inspect<T>(target: DriverTarget, work: (channel: import('amqplib').Channel) => Promise<T>): Promise<T> {
  const model = await connect(target.url);
  model.on('error', () => undefined);
  try {
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    return await work(channel);
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** Ready messages of a queue (0 when it does not exist). */
async function ready(target: DriverTarget, queue: string): Promise<number> {
  try {
    return await inspect(target, async (channel) => (await channel.checkQueue(queue)).messageCount);
  } catch {
    return 0;
  }
}

const driver: BrokerDriver = {
  name: 'rabbitmq',
  lab: 'rabbitmq',
  description: 'RabbitMQ 3.10, consume mode (prefetch = concurrency), publisher confirms',
  transport: (target) => new RabbitMqTransport({ url: target.url, logger: target.logger, reconnect: { initialDelayMs: 100, maxDelayMs: 2000, multiplier: 2 } }),
  queue: (base) => base,
  // Unacknowledged deliveries are not in messageCount: the suite reads it only once consumers stopped.
  leftover: async (target, queue) => ({ ready: await ready(target, queue) }),
  ports: (url) => [Number(new URL(url).port)],
  async cut() {
    const home = join(LAB_DIR, 'rabbitmq');
    const ctl = existsSync('/usr/lib/rabbitmq/bin/rabbitmqctl') ? '/usr/lib/rabbitmq/bin/rabbitmqctl' : 'rabbitmqctl';
    const env = {
      ...process.env,
      HOME: home,
      RABBITMQ_NODENAME: 'babelqueue@localhost',
      ERL_EPMD_ADDRESS: '127.0.0.1',
      RABBITMQ_CTL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    };
    await run(ctl, ['-n', 'babelqueue@localhost', '-q', 'close_all_connections', 'reliability suite: connection cut'], { env });
    return 'rabbitmqctl close_all_connections';
  },
  cleanup: (target, queues) => inspect(target, async (channel) => {
    for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined);
  }),
  chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: 5_000 },
  // RabbitMQ 3.10's max_message_size is 128 MiB; the suite stays far below.
  maxBodyBytes: 4 << 20,
};

export default driver;
