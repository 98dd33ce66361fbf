import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp, drainQueue, silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { until } from '../../../test/support/until.js';
import { envelope, lab, RawPulsar, uniqueQueue } from './support/pulsar.js';

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

  it('a drain with maxMessages spreads over the sockets; a take in order (drainQueue, as a redrive takes) uses one, in the broker\'s order', async () => {
    const raw = new RawPulsar(lab.url!);
    const queue = uniqueQueue('take-in-order');
    const transport = new PulsarTransport({ url: lab.url!, logger: silentLogger, consumerSockets: 8 });
    const publish = async (from: number) => {
      for (let i = from; i < from + 8; i++) {
        const { body, projection } = envelope(URN, { i }, queue);
        await transport.publish({ body, queue, projection });
      }
    };
    try {
      // Eight sockets of capacity one: all eight messages in flight at once means one on each socket.
      await publish(0);
      const app = createApp({ transport, queue, logger: silentLogger });
      let inFlight = 0;
      let listed = 0;
      app.handle(URN, async () => {
        inFlight += 1;
        await until(() => inFlight === 8, 60_000, 'eight in flight');
        listed ||= (await raw.consumers(queue)).length;
      });
      assert.equal(await app.consume({ maxMessages: 8, concurrency: 8, idleMs: 30_000 }), 8);
      assert.equal(listed, 8);

      await publish(8);
      const taken = await drainQueue(transport, queue, { max: 8, idleMs: 30_000 }, async (batch) => {
        const consumers = (await raw.consumers(queue)).length;
        for (const delivery of batch) await delivery.settle({ kind: 'ack' });
        return { consumers, order: batch.map((d) => (JSON.parse(d.body.toString()) as { data: { i: number } }).data.i) };
      });
      assert.equal(taken.consumers, 1);
      assert.deepEqual(taken.order, [8, 9, 10, 11, 12, 13, 14, 15]);
    } finally {
      await transport.close();
    }
  });
});
