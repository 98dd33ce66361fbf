// The transport contract on Kafka, without and with retry tiers. Every transport of
// one topic shares one consumer group, so what one left uncommitted the next is handed.
import { transportContract } from '../../../test/support/transport-contract.js';
import { kafka, Lab, uniqueQueue } from './support/kafka-lab.js';

for (const tiers of [undefined, [300]] as const) {
  transportContract({
    name: tiers ? 'kafka (retry tiers)' : 'kafka (no retry tiers)',
    skip: kafka.skip,
    // With tiers the first tier decides every wait (the backoff is ignored), 300 ms here.
    ...(tiers ? { minGapMs: 300 } : {}),
    open: () => {
      const lab = new Lab(kafka.url!);
      const run = uniqueQueue('c');
      let made: Promise<string> = Promise.resolve('');
      return {
        transport: (queue, logger) => lab.transport({
          groupId: `${run}-${queue}`,
          reinjectGroupId: `${run}-ri-${queue}`,
          logger,
          ...(tiers ? { retryTiersMs: tiers } : {}),
        }),
        // One topic at a time: kafkajs' admin answers concurrent offset look-ups of new topics with each other's metadata.
        queue: (label) => (made = made.then(() => lab.topic(`bq-kafka-${label}`), () => lab.topic(`bq-kafka-${label}`))),
        close: async () => {
          await lab.closeTransports();
          await lab.close();
        },
      };
    },
  });
}
