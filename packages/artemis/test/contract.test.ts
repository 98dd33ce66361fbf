// The transport contract on ActiveMQ Artemis (AMQP 1.0).
import { ArtemisTransport } from '../src/index.js';
import { transportContract } from '../../../test/support/transport-contract.js';
import { artemis, artemisUrl, Raw, uniqueQueue } from './support/artemis.js';

transportContract({
  name: 'artemis',
  skip: artemis.skip,
  open: () => {
    const queues: string[] = [];
    return {
      transport: (_queue, logger) => new ArtemisTransport({ url: artemisUrl(), requeueDelayMs: 50, logger }),
      queue: async (label) => {
        const queue = uniqueQueue(`bq-art-${label}`);
        queues.push(queue, `${queue}.dlq`);
        return queue;
      },
      close: async () => {
        const raw = await Raw.open();
        try {
          await raw.cleanup(...queues);
        } finally {
          await raw.close();
        }
      },
    };
  },
});
