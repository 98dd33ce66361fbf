import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drainQueue, silentLogger, type ScannedRecord } from '@babelqueue/core';
import { ArtemisTransport } from '../src/index.js';
import { artemis, Raw, uniqueQueue } from './support/artemis.js';

async function bodiesOf(records: AsyncIterable<ScannedRecord>): Promise<string[]> {
  const out: string[] = [];
  for await (const record of records) out.push(record.body.toString());
  return out;
}

describe('Artemis settlements made in one tick keep their own outcomes', { skip: artemis.skip }, () => {
  it('the head delivery accepted and the ones behind it released at once: only the head leaves the queue', async () => {
    const transport = new ArtemisTransport({ url: artemis.url!, logger: silentLogger });
    const queue = uniqueQueue('bq-dispositions');
    try {
      await transport.connect({ timeoutMs: 10_000 });
      for (let i = 0; i < 5; i++) await transport.publishRaw(queue, Buffer.from(`{"i":${i}}`));
      await drainQueue(transport, queue, { max: 5, idleMs: 1000 }, async (taken) => {
        assert.equal(taken.length, 5);
        // No await between them that waits for I/O: rhea writes them in one batch.
        await taken[0]!.settle({ kind: 'ack' });
        for (const delivery of taken.slice(1)) await delivery.settle({ kind: 'unsettled', why: 'handed back' });
      });
      assert.deepEqual(await bodiesOf(transport.scan(queue)), ['{"i":1}', '{"i":2}', '{"i":3}', '{"i":4}'], 'the record behind the accepted one is still there');
    } finally {
      await transport.close();
      const raw = await Raw.open();
      try {
        await raw.cleanup(queue);
      } finally {
        await raw.close();
      }
    }
  });
});
