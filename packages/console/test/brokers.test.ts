import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dlqName, silentLogger, type ScannedRecord, type Transport } from '@babelqueue/core';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { until } from '../../../test/support/until.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord, poison, XSS } from './support/records.js';
import { BROKERS } from './support/targets.js';

/** Every record of `queue`. */
async function everything(transport: Transport, queue: string): Promise<Buffer[]> {
  return (await all(transport.scan!(queue))).map((r) => r.body);
}

async function all(records: AsyncIterable<ScannedRecord>): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

for (const target of BROKERS) {
  const suite = broker(target.suite);
  describe(`console API on ${target.name}`, { skip: suite.skip }, () => {
    it('lists, filters and shows records from any language, redrives one, deletes one and purges, reporting counts', async () => {
      const transport: Transport = await target.make(suite.url!);
      const queue = uniqueQueue('console');
      const dlq = transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : dlqName(queue);
      await target.prepare?.(suite.url!, queue, dlq);
      const php = foreignRecord({ urn: 'urn:babel:orders:created', queue, lang: 'php', dlLang: 'php', error: 'SQLSTATE[40001] deadlock', exception: 'PDOException' });
      const go = foreignRecord({ urn: 'urn:babel:mail:send', queue, lang: 'go', dlLang: 'python', reason: 'unknown_urn', error: null, exception: null });
      const xss = foreignRecord({ urn: 'urn:babel:orders:created', queue, lang: 'python', dlLang: 'node', error: XSS, data: { note: XSS } });
      const running = await (async () => {
        await transport.connect({ timeoutMs: 10_000 });
        for (const body of [php, poison(Buffer.from([0xfe, 0x41]), queue), go, xss]) await transport.publishRaw!(dlq, body, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
        return startConsole({ transport, queues: [queue], port: 0, logger: silentLogger, idleMs: 1500 });
      })();
      try {
        const client = new ConsoleClient(running.url);
        const session = await client.open();
        assert.deepEqual([session.reads, session.scan], ['scan', target.scan]);
        assert.equal(session.can.remove, target.method === 'remove');
        assert.equal(session.removes, target.method === 'remove' ? 'in-place' : 'take-and-restore', 'the page says how chosen records leave the DLQ');

        const listed = await client.get('/api/records', { dlq });
        assert.equal(listed.status, 200, JSON.stringify(listed.body));
        assert.equal(listed.body.depth, 4);
        const rows = listed.body.records.map((r: any) => [r.kind, r.lang, r.dead_letter_lang]);
        const written = [['dead-letter', 'php', 'php'], ['poison', null, 'node'], ['dead-letter', 'go', 'python'], ['dead-letter', 'python', 'node']];
        const key = (row: unknown) => JSON.stringify(row);
        assert.deepEqual(target.ordered ? rows : [...rows].sort((a: unknown, b: unknown) => key(a).localeCompare(key(b))), target.ordered ? written : [...written].sort((a, b) => key(a).localeCompare(key(b))));
        const goOnly = await client.get('/api/records', { dlq, lang: 'go' });
        assert.deepEqual(goOnly.body.records.map((r: any) => r.reason), ['unknown_urn']);
        assert.deepEqual((await client.get('/api/records', { dlq, q: 'deadlock' })).body.records.map((r: any) => r.exception), ['PDOException']);
        const rowOf = (lang: string | null, kind = 'dead-letter') => listed.body.records.find((r: any) => r.lang === lang && r.kind === kind);
        const [phpRow, poisonRow, goRow] = [rowOf('php'), rowOf(null, 'poison'), rowOf('go')];
        const shown = (await client.get('/api/record', { dlq, index: poisonRow.index, hash: poisonRow.hash })).body.record;
        assert.equal(shown.raw.hex, 'fe 41');

        const redriven = await client.post('/api/redrive', { dlq, records: [{ index: phpRow.index, hash: phpRow.hash }] });
        assert.equal(redriven.status, 200, JSON.stringify(redriven.body));
        assert.deepEqual([redriven.body.redriven, redriven.body.method], [1, target.method], JSON.stringify(redriven.body));
        const work = await everything(transport, queue);
        assert.equal(work.length, 1);
        const expected = JSON.parse(php.toString());
        delete expected.dead_letter;
        expected.attempts = 0;
        assert.equal(work[0]!.toString(), JSON.stringify(expected), 'the ADR-0026 reset body on the work queue');
        assert.equal((await client.get('/api/records', { dlq })).body.depth, 3);

        const after = (await client.get('/api/records', { dlq })).body.records;
        const goNow = after.find((r: any) => r.hash === goRow.hash);
        const deleted = await client.post('/api/delete', { dlq, records: [{ index: goNow.index, hash: goNow.hash }] });
        assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
        assert.deepEqual([deleted.body.deleted, deleted.body.method], [1, target.method], JSON.stringify(deleted.body));
        const left = (await client.get('/api/records', { dlq })).body;
        assert.equal(left.depth, 2);
        assert.deepEqual(left.records.map((r: any) => r.kind).sort(), ['dead-letter', 'poison'], 'the others are kept (a take-and-restore writes them back)');

        // Service Bus: a record locked past the delete's drain is purged once its lock lapses (elsewhere: one call).
        let purged = 0;
        await until(async () => (purged += (await client.post('/api/purge', { dlq, confirm: dlq })).body.deleted as number) >= 2, 20_000, `${dlq} purged`, 500);
        assert.equal(purged, 2);
        assert.equal((await client.get('/api/records', { dlq })).body.depth, 0);
      } finally {
        await running.close();
        await transport.purge?.(queue).catch(() => undefined);
        await transport.purge?.(dlq).catch(() => undefined);
        await transport.close();
      }
    });
  });
}
