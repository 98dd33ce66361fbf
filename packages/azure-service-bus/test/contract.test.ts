// The transport contract on Azure Service Bus: the protocol-level stand-in
// (test/support/asb-standin), or a real namespace when BABELQUEUE_ASB_URL names one.
import { AzureServiceBusTransport } from '../src/index.js';
import { transportContract } from '../../../test/support/transport-contract.js';
import { asb, configureQueue, uniqueQueue } from './support/lab.js';

/** The lock of the unsettled cases' queues, so what a consumer left unsettled comes back within the test. */
const SHORT_LOCK_MS = 2_000;

transportContract({
  name: 'azure-service-bus',
  skip: asb.skip,
  open: () => ({
    transport: (_queue, logger) => new AzureServiceBusTransport({ connectionString: asb.url!, receiveWaitMs: 200, logger }),
    queue: async (label, options) => {
      const queue = uniqueQueue(`bq-asb-${label}`);
      await configureQueue(asb.url!, queue, options?.shortLease ? { lockDurationMs: SHORT_LOCK_MS } : {});
      await configureQueue(asb.url!, `${queue}.dlq`);
      return queue;
    },
  }),
});
