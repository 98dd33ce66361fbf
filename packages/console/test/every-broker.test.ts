import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { deadLetterReader, dlqName, silentLogger, type ScannedRecord, type Transport } from '@babelqueue/core';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { until } from '../../../test/support/until.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';
import { BROKERS, type Target } from './support/targets.js';

/** Every record of `queue` by the binding's own scan: the independent read the console's answers are checked against. */
async function scanAll(transport: Transport, queue: string): Promise<string[]> {
  const out: ScannedRecord[] = [];
  for await (const record of transport.scan!(queue)) out.push(record);
  return out.map((r) => r.body.toString());
}

async function open(target: Target, url: string): Promise<{ transport: Transport; queue: string; dlq: string }> {
  const transport = await target.make(url);
  const queue = uniqueQueue('console-every');
  const dlq = transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : dlqName(queue);
  await target.prepare?.(url, queue, dlq);
  await transport.connect({ timeoutMs: 10_000 });
  return { transport, queue, dlq };
}

function records(queue: string, n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => foreignRecord({ urn: 'urn:babel:t:x', queue, lang: 'php', dlLang: 'php', data: { i } }));
}

const sorted = (bodies: readonly string[]) => [...bodies].sort();

for (const target of BROKERS) {
  const suite = broker(target.suite);
  describe(`console actions on ${target.name} remove exactly the chosen records`, { skip: suite.skip }, () => {
    it('deleting the head, a middle and the tail record takes exactly that record; the reader (dlq list), the console and the broker count the same', async () => {
      const { transport, queue, dlq } = await open(target, suite.url!);
      const bodies = records(queue, 7).map((b) => b.toString());
      for (const body of bodies) await transport.publishRaw!(dlq, Buffer.from(body));
      // A send the client retried under load may land twice (publishing is at least once; no duplicate detection
      // here): what the broker holds is the truth the counts must agree with.
      let expected: string[] = [];
      await until(async () => {
        expected = await scanAll(transport, dlq);
        return new Set(expected).size === bodies.length;
      }, 30_000, 'every published record readable on the DLQ', 250);
      assert.deepEqual([...new Set(expected)].sort(), sorted(bodies), 'every published record is on the DLQ');
      const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, idleMs: 1500, sampleEveryMs: 60_000 });
      try {
        const client = new ConsoleClient(running.url);
        await client.open();
        const agree = async (when: string) => {
          const read = await client.get('/api/records', { dlq, limit: 50 });
          assert.equal(read.status, 200, `the page's read ${when}: ${JSON.stringify(read.body)}`);
          const page = read.body;
          const listing = await deadLetterReader(transport).list(dlq, 1000);
          const counts = { console: page.depth, shown: page.records.length, listed: listing.records.length, broker: listing.depth, partial: listing.partial };
          assert.deepEqual(counts, { console: expected.length, shown: expected.length, listed: expected.length, broker: expected.length, partial: false }, `counts ${when}`);
          return page.records as { index: number; hash: string }[];
        };
        await agree('before any action');
        for (const where of ['head', 'middle', 'tail'] as const) {
          const rows = await agree(`before deleting the ${where} record`);
          const chosen = where === 'head' ? rows[0]! : where === 'tail' ? rows[rows.length - 1]! : rows[Math.floor(rows.length / 2)]!;
          const deleted = await client.post('/api/delete', { dlq, records: [{ index: chosen.index, hash: chosen.hash }] });
          assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
          assert.deepEqual([deleted.body.deleted, deleted.body.not_found], [1, 0], JSON.stringify(deleted.body));
          const gone = expected.find((b) => (deleted.body.items[0].hash as string) === hashOf(b));
          assert.ok(gone !== undefined, 'the deleted item names a record that was there');
          expected.splice(expected.indexOf(gone), 1);
          assert.deepEqual(sorted(await scanAll(transport, dlq)), sorted(expected), `exactly the ${where} record left the DLQ`);
          await agree(`after deleting the ${where} record`);
        }
      } finally {
        await running.close();
        await transport.purge?.(dlq).catch(() => undefined);
        await transport.close();
      }
    });

    it('redriving 2 of 20 records moves those 2 and writes back only the records ahead of them, never the whole DLQ', async () => {
      const { transport, queue, dlq } = await open(target, suite.url!);
      const bodies = records(queue, 20);
      for (const body of bodies) await transport.publishRaw!(dlq, body);
      let rewrites = 0;
      const publishRaw = transport.publishRaw!.bind(transport);
      transport.publishRaw = async (to, body, headers, options) => {
        if (to === dlq) rewrites += 1;
        return publishRaw(to, body, headers, options);
      };
      const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, idleMs: 1500, sampleEveryMs: 60_000 });
      try {
        const client = new ConsoleClient(running.url);
        await client.open();
        const rows = (await client.get('/api/records', { dlq, limit: 50 })).body.records;
        const chosen = [rows[1], rows[3]].map((r: { index: number; hash: string }) => ({ index: r.index, hash: r.hash }));
        const result = await client.post('/api/redrive', { dlq, records: chosen });
        assert.equal(result.status, 200, JSON.stringify(result.body));
        assert.deepEqual([result.body.redriven, result.body.not_found], [2, 0], JSON.stringify(result.body));
        assert.ok(rewrites <= 2, `at most the 2 records ahead of the chosen ones were written back (${rewrites})`);
        const moved = new Set(chosen.map((c) => c.hash));
        const left = await scanAll(transport, dlq);
        assert.deepEqual(sorted(left), sorted(bodies.map((b) => b.toString()).filter((b) => !moved.has(hashOf(b)))), 'the other 18 stay on the DLQ, once each');
        assert.equal((await client.get('/api/records', { dlq, limit: 50 })).body.depth, 18);
      } finally {
        await running.close();
        for (const q of [queue, dlq]) await transport.purge?.(q).catch(() => undefined);
        await transport.close();
      }
    });
  });
}

function hashOf(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}
