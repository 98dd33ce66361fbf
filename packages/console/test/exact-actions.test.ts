import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger, type ScannedRecord, type Transport } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';

const artemis = broker('artemis');

async function scanAll(transport: Transport, queue: string): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of transport.scan!(queue)) out.push(record);
  return out;
}

describe('console actions on Artemis remove exactly the chosen records', { skip: artemis.skip }, () => {
  it('deleting the record at the head of the DLQ keeps the one behind it; the page reads the DLQ after the action', async () => {
    const transport = new ArtemisTransport({ url: artemis.url!, logger: silentLogger });
    await transport.connect({ timeoutMs: 10_000 });
    const dlq = `${uniqueQueue('console-head')}.dlq`;
    const bodies = Array.from({ length: 5 }, (_, i) => foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php', data: { i } }));
    for (const body of bodies) await transport.publishRaw(dlq, body);
    const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, idleMs: 1500, sampleEveryMs: 60_000 });
    try {
      const client = new ConsoleClient(running.url);
      await client.open();
      const rows = (await client.get('/api/records', { dlq })).body.records;
      assert.equal(rows.length, 5);
      const deleted = await client.post('/api/delete', { dlq, records: [{ index: rows[0].index, hash: rows[0].hash }] });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.equal(deleted.body.deleted, 1);
      const page = (await client.get('/api/records', { dlq })).body;
      assert.equal(page.depth, 4, `the page after the delete: ${JSON.stringify(page)}`);
      const left = (await scanAll(transport, dlq)).map((r) => r.body.toString()).sort();
      assert.deepEqual(left, bodies.slice(1).map((b) => b.toString()).sort(), 'exactly the chosen record left the DLQ');
    } finally {
      await running.close();
      await transport.purge(dlq).catch(() => undefined);
      await transport.close();
    }
  });
});
