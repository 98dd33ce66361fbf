import { describe } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { ArtemisTransport } from '../src/index.js';
import { scanContract } from '../../../test/support/scan-contract.js';
import { artemis, Raw, uniqueQueue } from './support/artemis.js';

describe('Artemis scan and depth (a browsing receiver, distribution-mode: copy)', { skip: artemis.skip }, () => {
  scanContract(async () => {
    const transport = new ArtemisTransport({ url: artemis.url!, logger: silentLogger });
    const queues: string[] = [];
    return {
      transport,
      queue: async () => {
        const queue = uniqueQueue('bq-scan');
        queues.push(queue);
        return queue;
      },
      close: async () => {
        await transport.close();
        const raw = await Raw.open();
        try {
          await raw.cleanup(...queues);
        } finally {
          await raw.close();
        }
      },
    };
  });
});
