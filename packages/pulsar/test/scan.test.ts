// The scan contract every transport keeps is in test/support/transport-contract.ts (contract.test.ts);
// here only what Pulsar alone has: a batching producer's entry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { silentLogger, type ScannedRecord } from '@babelqueue/core';
import { PulsarTransport } from '../src/index.js';
import { within } from '../../../test/support/until.js';
import { lab, RawPulsar, uniqueQueue } from './support/pulsar.js';

describe('Pulsar scan of a batching producer\'s entry', { skip: lab.skip }, () => {
  it('splits the stored batch into its messages, each with its own properties; depth counts the one entry', async () => {
    const raw = new RawPulsar(lab.url!);
    const transport = new PulsarTransport({ url: lab.url!, logger: silentLogger });
    const topic = uniqueQueue('bq-scan-batch');
    try {
      await raw.subscribe(topic);
      // A WebSocket producer with batching on stores messages sent together as one entry.
      const ws = new WebSocket(`${lab.url!.replace(/^http/, 'ws')}/ws/v2/producer/persistent/public/default/${topic}?batchingEnabled=true&batchingMaxMessages=3&batchingMaxPublishDelay=5000`);
      try {
        await within(new Promise((resolve, reject) => {
          ws.once('open', resolve);
          ws.once('error', reject);
        }), 20_000, 'a batching producer');
        const receipts = new Promise<void>((resolve) => {
          let left = 3;
          ws.on('message', () => --left === 0 && resolve());
        });
        for (let i = 0; i < 3; i++) ws.send(JSON.stringify({ payload: Buffer.from(`{"i":${i}}`).toString('base64'), properties: { n: String(i), traceparent: `t${i}` }, context: String(i) }));
        await within(receipts, 20_000, 'three send receipts');
      } finally {
        ws.close();
      }
      const read: ScannedRecord[] = [];
      for await (const record of transport.scan(topic)) read.push(record);
      assert.deepEqual(read.map((r) => [r.index, r.body.toString(), r.headers.n, r.headers.traceparent]), [
        [0, '{"i":0}', '0', 't0'], [1, '{"i":1}', '1', 't1'], [2, '{"i":2}', '2', 't2'],
      ]);
      assert.match(read[2]!.location ?? '', /batch index 2$/);
      const tail: ScannedRecord[] = [];
      for await (const record of transport.scan(topic, { offset: 2 })) tail.push(record);
      assert.deepEqual(tail.map((r) => r.body.toString()), ['{"i":2}'], 'an offset inside a batch');
      assert.equal(await transport.depth(topic), 1, 'Pulsar counts the batch entry once');
    } finally {
      await transport.close();
      await raw.cleanup([topic]);
    }
  });
});
