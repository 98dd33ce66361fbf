// The transport contract on SQS (ElasticMQ in the lab).
import { SqsTransport } from '@babelqueue/sqs';
import { transportContract } from '../../../test/support/transport-contract.js';
import { CREDENTIALS, Raw, REGION, sqs } from './support/sqs.js';

transportContract({
  name: 'sqs',
  skip: sqs.skip,
  // SQS counts delays and visibility in whole seconds.
  delayMs: 1000,
  unorderedScan: 'a standard queue keeps no order, and a leased scan reads in the order its receives return',
  open: () => {
    const raw = new Raw();
    return {
      // A short visibility, so what a consumer left unsettled comes back within the test.
      transport: (_queue, logger) => new SqsTransport({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS, logger, waitTimeSeconds: 1, visibilityTimeoutSeconds: 2, browseWorkQueues: true }),
      queue: async (label) => (await raw.fresh(label, { dlq: true })).name,
      close: () => raw.close(),
    };
  },
});
