// The transport contract on Pulsar (WebSocket API).
import { PulsarTransport } from '../src/index.js';
import { transportContract } from '../../../test/support/transport-contract.js';
import { lab, RawPulsar, uniqueQueue } from './support/pulsar.js';

transportContract({
  name: 'pulsar',
  skip: lab.skip,
  // Pulsar's delays are not strict by default: a delayed copy may come up to one tick (1 s) early (README).
  minGapMs: 0,
  open: () => {
    const raw = new RawPulsar(lab.url!);
    const topics: string[] = [];
    return {
      transport: (_queue, logger) => new PulsarTransport({ url: lab.url!, negativeAckRedeliveryDelayMs: 100, logger }),
      queue: async (label) => {
        const queue = uniqueQueue(`bq-pulsar-${label}`);
        topics.push(queue, `${queue}.dlq`);
        await raw.subscribe(queue);
        await raw.subscribe(`${queue}.dlq`);
        return queue;
      },
      close: () => raw.cleanup(topics),
    };
  },
});
