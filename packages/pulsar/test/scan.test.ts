import { describe } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '../src/index.js';
import { scanContract } from '../../../test/support/scan-contract.js';
import { lab, RawPulsar, uniqueQueue } from './support/pulsar.js';

describe('Pulsar scan and depth (the admin API peek of the subscription backlog)', { skip: lab.skip }, () => {
  scanContract(async () => {
    const transport = new PulsarTransport({ url: lab.url!, logger: silentLogger });
    const raw = new RawPulsar(lab.url!);
    const topics: string[] = [];
    return {
      transport,
      queue: async () => {
        const topic = uniqueQueue('bq-scan');
        topics.push(topic);
        await raw.subscribe(topic);
        return topic;
      },
      close: async () => {
        await transport.close();
        await raw.cleanup(topics);
      },
    };
  });
});
