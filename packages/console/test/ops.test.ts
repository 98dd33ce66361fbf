import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createApp, InMemoryTransport, reemit, silentLogger, transportFromUrl } from '@babelqueue/core';
import { SqsTransport } from '@babelqueue/sqs';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { until } from '../../../test/support/until.js';
import { startConsole } from '../src/index.js';
import { captureLogger } from '../../../test/support/capture-logger.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';

const SECRET = 'payload-marker-51c2';
const URN = 'urn:babel:orders:created';

async function consoleOn(transport: InMemoryTransport, options: Record<string, unknown> = {}) {
  const logger = captureLogger();
  const running = await startConsole({ transport, queues: ['orders'], port: 0, logger, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')), ...options });
  const client = new ConsoleClient(running.url, options.basicAuth ? { Authorization: `Basic ${Buffer.from('ops:s3cret-pass').toString('base64')}` } : {});
  await client.open();
  return { running, client, logger };
}

async function dlqWith(count: number, data: (i: number) => Record<string, unknown> = (i) => ({ order_id: i, note: SECRET })): Promise<{ transport: InMemoryTransport; records: Buffer[] }> {
  const transport = new InMemoryTransport();
  const records: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const record = foreignRecord({ urn: URN, queue: 'orders', lang: 'php', dlLang: 'php', data: data(i), id: `id-${i}` });
    records.push(record);
    await transport.publishRaw('orders.dlq', record);
  }
  return { transport, records };
}

const refs = async (client: ConsoleClient) => (await client.get('/api/records', { dlq: 'orders.dlq', limit: 200 })).body.records.map((r: any) => ({ index: r.index, hash: r.hash }));

describe('console audit trail', () => {
  it('logs every redrive, delete and purge at info (who, filter, target, counts, ids), appends them to the JSONL file, and serves them', async () => {
    const { transport } = await dlqWith(80);
    const file = join(mkdtempSync(join(tmpdir(), 'bq-console-audit-')), 'nested', 'audit.jsonl');
    const { running, client, logger } = await consoleOn(transport, { auditLog: file, basicAuth: { username: 'ops', password: 's3cret-pass' } });
    try {
      const rows = await refs(client);
      const deleted = await client.post('/api/delete', { dlq: 'orders.dlq', records: rows.slice(0, 2) });
      assert.equal(deleted.body.deleted, 2);
      await transport.publishRaw('orders', Buffer.from('{}')); // the target holds a record: no question asked
      const redriven = await client.post('/api/redrive', { dlq: 'orders.dlq', matching: { lang: 'php' }, to: 'orders' });
      assert.equal(redriven.status, 200, JSON.stringify(redriven.body));
      assert.equal(redriven.body.redriven, 78);
      const purged = await client.post('/api/purge', { dlq: 'orders.dlq', confirm: 'orders.dlq' });
      assert.equal(purged.status, 200);

      const lines = logger.lines.filter((l) => l.message === 'console: audit');
      assert.equal(lines.length, 3, logger.text());
      assert.ok(lines.every((l) => l.level === 'info'), 'audit lines are info');
      const [del, red, pur] = lines.map((l) => l.fields as any);
      assert.equal(del.action, 'delete');
      assert.equal(del.dlq, 'orders.dlq');
      assert.deepEqual(del.who, { address: '127.0.0.1', user: 'ops', auth: 'basic' });
      assert.deepEqual(del.records, ['id-0', 'id-1']);
      assert.equal(del.counts.deleted, 2);
      assert.equal(red.action, 'redrive');
      assert.deepEqual(red.filter, { lang: 'php' });
      assert.equal(red.target, 'orders');
      assert.equal(red.counts.redriven, 78);
      assert.equal(red.records, undefined, 'past 50 records: a digest, not the list');
      assert.equal(red.digest.count, 78);
      assert.match(red.digest.sha256, /^[0-9a-f]{64}$/);
      assert.equal(pur.action, 'purge');
      assert.equal(pur.counts.deleted, 0);
      assert.doesNotMatch(logger.text(), new RegExp(SECRET), 'no body in the log');

      const written = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(written.map((e) => e.action), ['delete', 'redrive', 'purge']);
      assert.deepEqual(written[0], JSON.parse(JSON.stringify(del)));
      assert.doesNotMatch(readFileSync(file, 'utf8'), new RegExp(SECRET));

      const page = await client.get('/api/audit');
      assert.equal(page.status, 200);
      assert.equal(page.body.source, 'file');
      assert.deepEqual(page.body.entries.map((e: any) => e.action), ['purge', 'redrive', 'delete'], 'newest first');
    } finally {
      await running.close();
    }
    // A later run shows the earlier run's entries from the file.
    const again = await consoleOn(new InMemoryTransport(), { auditLog: file });
    try {
      const page = await again.client.get('/api/audit');
      assert.equal(page.body.entries.length, 3);
    } finally {
      await again.running.close();
    }
  });

  it('without a file: the entries of this run, from memory', async () => {
    const { transport } = await dlqWith(1);
    const { running, client } = await consoleOn(transport);
    try {
      await client.post('/api/delete', { dlq: 'orders.dlq', records: await refs(client) });
      const page = await client.get('/api/audit');
      assert.equal(page.body.source, 'memory');
      assert.equal(page.body.entries.length, 1);
      assert.equal(page.body.entries[0].who.auth, 'none');
    } finally {
      await running.close();
    }
  });
});

describe('console edit and redrive', () => {
  it('sends the reset copy with only data changed, then removes the original; meta.id and trace_id stay', async () => {
    const { transport, records } = await dlqWith(2);
    const { running, client, logger } = await consoleOn(transport);
    try {
      const [first] = await refs(client);
      const data = '{\n  "order_id": 0,\n  "note": "fixed",\n  "lines": [1, 2.5, "x"]\n}';
      const result = await client.post('/api/edit', { dlq: 'orders.dlq', record: first, data });
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.equal(result.body.redriven, 1);
      const [sent] = transport.broker.ready('orders');
      const expected = reemit(records[0]!, { deadLetter: null, attempts: 0, data: { order_id: 0, note: 'fixed', lines: [1, 2.5, 'x'] } });
      assert.equal(sent!.body.toString(), expected.toString(), 'the stored bytes with the reset and the new data, nothing else');
      const parsed = JSON.parse(sent!.body.toString());
      const original = JSON.parse(records[0]!.toString());
      assert.equal(parsed.meta.id, original.meta.id);
      assert.equal(parsed.trace_id, original.trace_id);
      assert.deepEqual(Object.keys(parsed), ['job', 'trace_id', 'data', 'meta', 'attempts']);
      assert.deepEqual(transport.messages('orders.dlq').map((m) => m.toString()), [records[1]!.toString()], 'the original left the DLQ, the other stays');
      const audit = logger.lines.find((l) => l.message === 'console: audit')!.fields as any;
      assert.equal(audit.action, 'edit');
      assert.deepEqual(audit.records, ['id-0']);
      assert.match(audit.edit.sent, /^[0-9a-f]{16}$/);
    } finally {
      await running.close();
    }
  });

  it('a bad edit is a 400 and nothing changes on the DLQ or the work queue', async () => {
    const { transport, records } = await dlqWith(1);
    const { running, client } = await consoleOn(transport);
    try {
      const [ref] = await refs(client);
      const cases: [unknown, RegExp][] = [
        ['[1, 2]', /must be a JSON object/],
        ['"text"', /must be a JSON object/],
        ['{"order_id": 1,', /not valid JSON/],
        ['{"id": 12345678901234567890}', /beyond 2\^53/],
        [{ order_id: 1 }, /JSON text/],
      ];
      for (const [data, why] of cases) {
        const answer = await client.post('/api/edit', { dlq: 'orders.dlq', record: ref, data });
        assert.equal(answer.status, 400, `${JSON.stringify(data)}: ${JSON.stringify(answer.body)}`);
        assert.match(answer.body.error, why);
      }
      const unknown = await client.post('/api/edit', { dlq: 'orders.dlq', record: ref, data: '{}', meta: {} });
      assert.equal(unknown.status, 400, 'only data can be edited');
      assert.deepEqual(transport.messages('orders.dlq').map((m) => m.toString()), [records[0]!.toString()]);
      assert.equal(transport.broker.ready('orders').length, 0);
    } finally {
      await running.close();
    }
  });

  it('a record that would not make a valid envelope (blank trace_id) is refused before anything is sent', async () => {
    const transport = new InMemoryTransport();
    // A foreign record with a blank trace_id: a redrive would send an envelope every consumer rejects.
    const record = Buffer.from(foreignRecord({ urn: URN, queue: 'orders', lang: 'go', dlLang: 'go', traceId: ' ' }));
    await transport.publishRaw('orders.dlq', record);
    const { running, client } = await consoleOn(transport);
    try {
      const [ref] = await refs(client);
      const answer = await client.post('/api/edit', { dlq: 'orders.dlq', record: ref, data: '{"order_id": 2}' });
      assert.equal(answer.status, 400);
      assert.match(answer.body.error, /cannot be edited and redriven/);
      assert.equal(transport.messages('orders.dlq').length, 1);
      assert.equal(transport.broker.ready('orders').length, 0);
    } finally {
      await running.close();
    }
  });
});

describe('console redrive targets', () => {
  it('refuses a DLQ as the target (the one redriven, or another this console shows)', async () => {
    const { transport } = await dlqWith(2);
    const { running, client } = await consoleOn(transport, { dlqs: ['payments.dlq'] });
    try {
      const rows = await refs(client);
      for (const to of ['orders.dlq', 'payments.dlq']) {
        const answer = await client.post('/api/redrive', { dlq: 'orders.dlq', records: rows.slice(0, 1), to, create: true });
        assert.equal(answer.status, 400, to);
        assert.match(answer.body.error, /is a dead-letter queue/);
        const edit = await client.post('/api/edit', { dlq: 'orders.dlq', record: rows[0], data: '{}', to });
        assert.equal(edit.status, 400);
      }
      const all = await client.post('/api/redrive', { dlq: 'orders.dlq', matching: 'all', to: 'orders.dlq' });
      assert.equal(all.status, 400);
      assert.equal(transport.messages('orders.dlq').length, 2, 'nothing moved');
    } finally {
      await running.close();
    }
  });

  it('asks before sending to a queue that may not exist: 409 with confirm "create", then "create": true sends', async () => {
    const { transport } = await dlqWith(2);
    const { running, client } = await consoleOn(transport);
    try {
      const rows = await refs(client);
      const asked = await client.post('/api/redrive', { dlq: 'orders.dlq', records: rows.slice(0, 1), to: 'ordres' });
      assert.equal(asked.status, 409);
      assert.equal(asked.body.confirm, 'create');
      assert.equal(asked.body.target, 'ordres');
      assert.equal(transport.messages('orders.dlq').length, 2, 'nothing moved before the answer');
      const sent = await client.post('/api/redrive', { dlq: 'orders.dlq', records: rows.slice(0, 1), to: 'ordres', create: true });
      assert.equal(sent.status, 200);
      assert.equal(sent.body.redriven, 1);
      assert.equal(transport.broker.ready('ordres').length, 1);
      const bad = await client.post('/api/redrive', { dlq: 'orders.dlq', records: rows.slice(1), to: 'x', create: 'yes' });
      assert.equal(bad.status, 400);
    } finally {
      await running.close();
    }
  });
});

describe('console on SQS: a record shows its message attributes', { skip: broker('sqs').skip }, () => {
  it('lists the bq-* attributes beside the body (SQS browses them with the body)', async () => {
    const transport = new SqsTransport({ endpoint: broker('sqs').url!, region: 'us-east-1', credentials: { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' }, waitTimeSeconds: 1, createQueues: true, logger: silentLogger });
    await transport.connect({ timeoutMs: 10_000 });
    const queue = uniqueQueue('console-sqs-attrs');
    const dlq = `${queue}-dlq`;
    const app = createApp({ transport, queue, logger: silentLogger });
    const running = await startConsole({ transport, queues: [queue], port: 0, logger: silentLogger, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')) });
    try {
      // A record on the DLQ as the SQS binding writes one: the envelope projected onto bq-* attributes.
      const id = await app.publish(URN, { order_id: 9 }, { queue: dlq });
      const client = new ConsoleClient(running.url);
      await client.open();
      const [row] = (await client.get('/api/records', { dlq })).body.records;
      assert.equal(row.message_id, id);
      const { body } = await client.get('/api/record', { dlq, index: row.index, hash: row.hash });
      assert.equal(body.record.headers['bq-job'], URN);
      assert.equal(body.record.headers['bq-message-id'], id);
      assert.ok(Object.keys(body.record.headers).filter((k) => k.startsWith('bq-')).length >= 4, JSON.stringify(body.record.headers));
    } finally {
      await running.close();
      await transport.purge(dlq).catch(() => undefined);
      await transport.close();
    }
  });
});

describe('console edit and redrive on RabbitMQ (a drain broker: take, send the copy, then acknowledge)', { skip: broker('rabbitmq').skip }, () => {
  it('sends the edited copy to a new queue after the question, removes only the original, and keeps the others', async () => {
    const transport = await transportFromUrl(broker('rabbitmq').url!);
    await transport.connect({ timeoutMs: 10_000 });
    const queue = uniqueQueue('console-edit-rabbit');
    const dlq = `${queue}.dlq`;
    const target = `${queue}-fixed`;
    const records = [0, 1, 2].map((i) => foreignRecord({ urn: URN, queue, lang: 'php', dlLang: 'php', id: `r-${i}`, data: { order_id: i } }));
    for (const record of records) await transport.publishRaw!(dlq, record);
    await until(async () => (await transport.depth!(dlq)) === 3, 20_000, 'three records on the DLQ');
    const running = await startConsole({ transport, queues: [queue], port: 0, logger: silentLogger, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')), idleMs: 200 });
    try {
      const client = new ConsoleClient(running.url);
      await client.open();
      const rows = (await client.get('/api/records', { dlq })).body.records;
      const ref = { index: rows[1].index, hash: rows[1].hash };
      const asked = await client.post('/api/edit', { dlq, record: ref, data: '{"order_id": 10}', to: target });
      assert.equal(asked.status, 409, JSON.stringify(asked.body));
      assert.equal(asked.body.confirm, 'create');
      const sent = await client.post('/api/edit', { dlq, record: ref, data: '{"order_id": 10}', to: target, create: true });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assert.equal(sent.body.method, 'drain');
      assert.equal(sent.body.redriven, 1);
      const [copy] = await transport.browse!(target, 10);
      assert.equal(copy!.toString(), reemit(records[1]!, { deadLetter: null, attempts: 0, data: { order_id: 10 } }).toString());
      const left = (await client.get('/api/records', { dlq })).body.records.map((r: any) => r.message_id);
      assert.deepEqual(left.sort(), ['r-0', 'r-2']);
    } finally {
      await running.close();
      for (const q of [dlq, target]) await transport.purge!(q).catch(() => undefined);
      await transport.close();
    }
  });
});
