import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger, transportFromUrl, type ScannedRecord, type Transport } from '@babelqueue/core';
import { broker, uniqueQueue, type BrokerName } from '../../../test/support/brokers.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord, poison, XSS } from './support/records.js';

/** Each broker the console is tested on, with how its transport is made and how it removes one record. */
const BROKERS: readonly { name: string; suite: BrokerName; url: (base: string) => string; method: 'remove' | 'drain' }[] = [
  { name: 'Redis (legacy layout)', suite: 'redis', url: (base) => base, method: 'remove' },
  { name: 'Redis (zset layout)', suite: 'redis', url: (base) => `${base}?layout=zset`, method: 'remove' },
  { name: 'RabbitMQ', suite: 'rabbitmq', url: (base) => base, method: 'drain' },
  // Drains hold what they take: a Kafka DLQ tool needs ordering=none (the CLI adds it).
  { name: 'Kafka', suite: 'kafka', url: (base) => `${base}?groupId=${uniqueQueue('console')}&ordering=none`, method: 'drain' },
];

async function all(records: AsyncIterable<ScannedRecord>): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

for (const target of BROKERS) {
  const suite = broker(target.suite);
  describe(`console API on ${target.name}`, { skip: suite.skip }, () => {
    it('lists, filters and shows records from any language, redrives one, deletes one and purges, reporting counts', async () => {
      const transport: Transport = await transportFromUrl(target.url(suite.url!));
      const queue = uniqueQueue('console');
      const dlq = `${queue}.dlq`;
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
        assert.equal(session.reads, 'scan');
        assert.equal(session.can.remove, target.method === 'remove');

        const listed = await client.get('/api/records', { dlq });
        assert.equal(listed.status, 200, JSON.stringify(listed.body));
        assert.equal(listed.body.depth, 4);
        assert.deepEqual(listed.body.records.map((r: any) => [r.kind, r.lang, r.dead_letter_lang]), [
          ['dead-letter', 'php', 'php'], ['poison', null, 'node'], ['dead-letter', 'go', 'python'], ['dead-letter', 'python', 'node'],
        ]);
        const goOnly = await client.get('/api/records', { dlq, lang: 'go' });
        assert.deepEqual(goOnly.body.records.map((r: any) => r.reason), ['unknown_urn']);
        assert.deepEqual((await client.get('/api/records', { dlq, q: 'deadlock' })).body.records.map((r: any) => r.exception), ['PDOException']);
        const [phpRow, poisonRow, goRow] = listed.body.records;
        const shown = (await client.get('/api/record', { dlq, index: poisonRow.index, hash: poisonRow.hash })).body.record;
        assert.equal(shown.raw.hex, 'fe 41');

        const redriven = await client.post('/api/redrive', { dlq, records: [{ index: phpRow.index, hash: phpRow.hash }] });
        assert.equal(redriven.status, 200, JSON.stringify(redriven.body));
        assert.deepEqual([redriven.body.redriven, redriven.body.method], [1, target.method], JSON.stringify(redriven.body));
        const work = await all(transport.scan!(queue));
        assert.equal(work.length, 1);
        const expected = JSON.parse(php.toString());
        delete expected.dead_letter;
        expected.attempts = 0;
        assert.equal(work[0]!.body.toString(), JSON.stringify(expected), 'the ADR-0026 reset body on the work queue');
        assert.equal((await client.get('/api/records', { dlq })).body.depth, 3);

        const after = (await client.get('/api/records', { dlq })).body.records;
        const goNow = after.find((r: any) => r.hash === goRow.hash);
        const deleted = await client.post('/api/delete', { dlq, records: [{ index: goNow.index, hash: goNow.hash }] });
        assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
        assert.deepEqual([deleted.body.deleted, deleted.body.method], [1, target.method], JSON.stringify(deleted.body));
        const left = (await client.get('/api/records', { dlq })).body;
        assert.equal(left.depth, 2);
        assert.deepEqual(left.records.map((r: any) => r.kind).sort(), ['dead-letter', 'poison'], 'the others are kept (a take-and-restore writes them back)');

        const purged = await client.post('/api/purge', { dlq, confirm: dlq });
        assert.equal(purged.body.deleted, 2);
        assert.equal((await client.get('/api/records', { dlq })).body.depth, 0);
      } finally {
        await running.close();
        await transport.purge?.(queue).catch(() => undefined);
        await transport.close();
      }
    });
  });
}
