// The transport contract on RabbitMQ, in both consume modes.
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { transportContract } from '../../../test/support/transport-contract.js';
import { rabbit, Raw, uniqueQueue } from './support/rabbit.js';

for (const mode of ['consume', 'get'] as const) {
  transportContract({
    name: `rabbitmq (${mode} mode)`,
    skip: rabbit.skip,
    open: async () => {
      const raw = await Raw.open(rabbit.url!);
      const created: string[] = [];
      return {
        transport: (_queue, logger) => new RabbitMqTransport({ url: rabbit.url!, mode, requeueDelayMs: 50, poll: { minMs: 10, maxMs: 50 }, logger }),
        queue: async (label) => {
          const queue = uniqueQueue(`bq-rmq-${mode}-${label}`);
          created.push(queue, `${queue}.dlq`, `${queue}.delay.300`);
          return queue;
        },
        close: async () => {
          await raw.cleanup(...created);
          await raw.close();
        },
      };
    },
  });
}
