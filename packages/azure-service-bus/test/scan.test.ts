import { describe } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { AzureServiceBusTransport } from '../src/index.js';
import { scanContract } from '../../../test/support/scan-contract.js';
import { asb, configureQueue, uniqueQueue } from './support/lab.js';

describe('Service Bus scan and depth (peekMessages by sequence number)', { skip: asb.skip }, () => {
  scanContract(async () => {
    const transport = new AzureServiceBusTransport({ connectionString: asb.url!, receiveWaitMs: 200, logger: silentLogger });
    return {
      transport,
      queue: async () => {
        const queue = uniqueQueue('bq-scan');
        await configureQueue(asb.url!, queue);
        return queue;
      },
      close: () => transport.close(),
    };
  });
});
