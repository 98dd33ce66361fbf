import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp, silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { until } from '../../../test/support/until.js';
import { envelope, lab, uniqueQueue } from './support/pulsar.js';

const URN = 'urn:babel:orders:created';

describe('Pulsar consume over many consumer sockets', { skip: lab.skip }, () => {
  it('16 sockets at concurrency 32 each listen for the stop, and Node warns of no listener leak', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const queue = uniqueQueue('many-sockets');
    const transport = new PulsarTransport({ url: lab.url!, logger: silentLogger, consumerSockets: 16 });
    try {
      for (let i = 0; i < 20; i++) {
        const { body, projection } = envelope(URN, { i }, queue);
        await transport.publish({ body, queue, projection });
      }
      const app = createApp({ transport, queue, logger: silentLogger });
      let handled = 0;
      app.handle(URN, () => void (handled += 1));
      const stop = new AbortController();
      const run = app.run({ concurrency: 32, signal: stop.signal });
      await until(() => handled === 20, 60_000, '20 handled');
      stop.abort();
      await run;
      await new Promise((resolve) => setImmediate(resolve)); // process warnings are emitted on a later tick
    } finally {
      process.off('warning', onWarning);
      await transport.close();
    }
    assert.deepEqual(warnings.filter((w) => /MaxListeners/.test(w)), []);
  });
});
