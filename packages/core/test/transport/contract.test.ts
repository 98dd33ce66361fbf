// The transport contract on the in-memory transport: one broker shared by every transport of the suite.
import { InMemoryTransport, MemoryBroker } from '@babelqueue/core';
import { transportContract } from '../../../../test/support/transport-contract.js';
import { uniqueQueue } from '../../../../test/support/brokers.js';

transportContract({
  name: 'memory',
  skip: false,
  open: () => {
    const broker = new MemoryBroker();
    return {
      // A short lease, so what a consumer left unsettled comes back within the test.
      transport: () => new InMemoryTransport({ broker, visibilityTimeoutMs: 1000, redeliveryDelayMs: 20 }),
      queue: async (label) => uniqueQueue(`bq-mem-${label}`),
    };
  },
});
