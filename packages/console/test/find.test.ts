import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InMemoryTransport, silentLogger, transportFromUrl, type Transport } from '@babelqueue/core';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { maskError } from '../src/groups.js';
import { startConsole, type RunningConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord, poison } from './support/records.js';

const redis = broker('redis');

async function consoleOn(transport: Transport, dlq: string) {
  // A budget no test run reaches: these tests read in one request (scale.test.ts covers answering early).
  const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, scanBudgetMs: 600_000, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')) });
  const client = new ConsoleClient(running.url);
  await client.open();
  return { running, client };
}

describe('finding a record: search over data, meta.id, trace_id and the error; open by id', () => {
  const transport = new InMemoryTransport();
  const dlq = 'orders.dlq';
  let running: RunningConsole;
  let client: ConsoleClient;
  const ids: string[] = [];
  const traces: string[] = [];

  before(async () => {
    for (let i = 0; i < 20_000; i++) {
      const id = `m-${i.toString().padStart(5, '0')}-c0ffee`;
      const trace = `trace-${(i * 7919).toString(36)}-x`;
      ids.push(id);
      traces.push(trace);
      await transport.publishRaw(dlq, foreignRecord({
        urn: 'urn:babel:orders:created', queue: 'orders', lang: 'php', dlLang: 'node', id, traceId: trace, failedAt: 1_700_000_000_000,
        data: { customer: i === 15_902 ? 'Zoë Quartermaine' : `customer ${i}`, order: 500_000 + i },
        error: i === 4_321 ? 'card declined by issuer' : 'gateway timeout', exception: i === 4_321 ? 'PaymentDeclined' : 'TimeoutError',
      }));
    }
    await transport.publishRaw(dlq, poison('not json: needle-in-raw', 'orders', 'body is not a JSON object'));
    ({ running, client } = await consoleOn(transport, dlq));
  });
  after(() => running.close());

  const find = async (text: string, extra: Record<string, string | number> = {}) => {
    const res = await client.get('/api/records', { dlq, find: text, limit: 50, ...extra });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  it('finds the record at position 15,903 of 20,000 by a word of its data, in one request', async () => {
    const page = await find('quartermaine');
    assert.deepEqual(page.records.map((r: any) => r.index), [15_902]);
    assert.equal(page.scanned, 20_001, 'the page says how much was scanned');
    assert.equal(page.complete, true);
    assert.deepEqual((await find('Zoë')).records.map((r: any) => r.index), [15_902], 'non-ASCII words too');
    assert.deepEqual((await find('500017')).records.map((r: any) => r.index), [17], 'a number in data');
  });

  it('searches meta.id, trace_id and the dead_letter block; every word must match', async () => {
    assert.deepEqual((await find(ids[12_345]!)).records.map((r: any) => r.index), [12_345]);
    assert.deepEqual((await find(traces[777]!.toUpperCase())).records.map((r: any) => r.index), [777], 'any case');
    assert.deepEqual((await find('declined PaymentDeclined')).records.map((r: any) => r.index), [4_321]);
    assert.deepEqual((await find('declined quartermaine')).records, [], 'all words must match');
    assert.deepEqual((await find('needle-in-raw')).records.map((r: any) => r.index), [20_000], 'a poison record by its original bytes');
    // Words only in the URN or in key names are not searched: those fields have filters of their own.
    assert.deepEqual((await find('urn:babel:orders:created')).records, []);
  });

  it('open by id: a record by its meta.id, or by the fingerprint of its bytes', async () => {
    const found = await client.get('/api/find', { dlq, id: ids[15_902]! });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.equal(found.body.record.index, 15_902);
    assert.match(found.body.record.body.text, /Zoë Quartermaine/);
    const poisonRow = (await find('needle-in-raw')).records[0];
    const byHash = await client.get('/api/find', { dlq, id: poisonRow.hash });
    assert.equal(byHash.body.record.kind, 'poison');
    const missing = await client.get('/api/find', { dlq, id: 'no-such-id' });
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /among the 20001 records scanned/);
  });

  it('a bulk action takes find as a typed filter: it narrows to the search', async () => {
    const moved = await client.post('/api/redrive', { dlq, matching: { find: 'quartermaine' } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(moved.body.redriven, 1);
    assert.equal(transport.messages('orders').length, 1);
    assert.match(transport.messages('orders')[0]!.toString(), /Quartermaine/);
    const bad = await client.post('/api/redrive', { dlq, matching: { find: 42 } });
    assert.equal(bad.status, 400);
  });
});

describe('failure groups', () => {
  // Error texts that differ only in ids and numbers fall into one group; the masked text names it.
  const MASKING: readonly [string, string][] = [
    ['order 1042 not found', 'order <n> not found'],
    ['order 77 not found', 'order <n> not found'],
    ['user 6f1c2a4e-9b1d-4c7e-8a55-0d3e2f1a9b7c has no wallet', 'user <uuid> has no wallet'],
    ['lock 5f3a9c01ab held by worker-12', 'lock <hex> held by worker-<n>'],
    ['pointer 0x7ffde4a0 is null', 'pointer <hex> is null'],
    ['timeout after 30.5s (limit 30s)', 'timeout after <n>s (limit <n>s)'],
    ['deadbeef is a word, so is cafe', 'deadbeef is a word, so is cafe'],
    ['retry at 2026-12-02 03:04:05', 'retry at <n>-<n>-<n> <n>'],
    ['no numbers here', 'no numbers here'],
  ];
  for (const [error, masked] of MASKING) {
    it(`masks ${JSON.stringify(error)} as ${JSON.stringify(masked)}`, () => assert.equal(maskError(error), masked));
  }

  it('groups by URN, exception and masked error, with counts, first and last failed_at and languages', async () => {
    const transport = new InMemoryTransport();
    const t0 = 1_760_000_000_000;
    for (let i = 0; i < 60; i++) {
      const kind = i % 3;
      await transport.publishRaw('orders.dlq', foreignRecord({
        urn: kind === 2 ? 'urn:babel:mail:send' : 'urn:babel:orders:created',
        queue: 'orders',
        lang: ['php', 'python', 'go'][i % 2]!,
        dlLang: 'node',
        error: kind === 0 ? `order ${1000 + i} not found` : kind === 1 ? `gateway ${i}.${i} timeout` : `order ${i} not found`,
        exception: kind === 1 ? 'TimeoutError' : 'NotFound',
        failedAt: t0 + i * 60_000,
      }));
    }
    const { running, client } = await consoleOn(transport, 'orders.dlq');
    try {
      const res = await client.get('/api/groups', { dlq: 'orders.dlq' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.group_count, 3, 'same URN and exception but another URN: another group');
      const byError = Object.fromEntries(res.body.groups.map((g: any) => [`${g.urn} ${g.error}`, g]));
      const orders = byError['urn:babel:orders:created order <n> not found'];
      assert.equal(orders.count, 20);
      assert.equal(orders.exception, 'NotFound');
      assert.equal(orders.first_failed_at, t0);
      assert.equal(orders.last_failed_at, t0 + 57 * 60_000);
      assert.deepEqual(orders.langs, { php: 10, python: 10 });
      assert.equal(byError['urn:babel:orders:created gateway <n> timeout'].count, 20);
      assert.equal(byError['urn:babel:mail:send order <n> not found'].count, 20);
      // Clicking a group filters by it: pages and charts follow the filter.
      const page = await client.get('/api/records', { dlq: 'orders.dlq', group: orders.id, limit: 200 });
      assert.deepEqual(page.body.records.map((r: any) => r.index), Array.from({ length: 20 }, (_, i) => i * 3));
      const stats = await client.get('/api/stats', { dlq: 'orders.dlq', group: orders.id });
      assert.equal(stats.body.matched, 20);
      assert.equal(stats.body.failed_at.buckets.reduce((sum: number, b: any) => sum + b.count, 0), 20, 'the failed_at histogram counts the filtered records');
      assert.ok(stats.body.failed_at.buckets.length <= 120, 'the histogram stays bounded');
      assert.equal((await client.get('/api/records', { dlq: 'orders.dlq', group: 'not-a-group' })).status, 400);
    } finally {
      await running.close();
    }
  });
});

describe('redrive and delete of a failure group on Redis remove exactly the group', { skip: redis.skip }, () => {
  let transport: Transport;
  const queue = uniqueQueue('console-groups');
  const dlq = `${queue}.dlq`;

  before(async () => {
    transport = await transportFromUrl(redis.url!);
    await transport.connect({ timeoutMs: 10_000 });
    // Three groups interleaved, 300 records each, so a chunked action must go on past its first chunk.
    for (let i = 0; i < 900; i++) {
      const kind = i % 3;
      await transport.publishRaw!(dlq, foreignRecord({
        urn: 'urn:babel:orders:created', queue, lang: kind === 0 ? 'python' : 'node', dlLang: 'node',
        error: kind === 0 ? `order ${i} not found` : kind === 1 ? `stock ${i} reserved twice` : `order ${i} not found`,
        exception: kind === 2 ? 'KeyError' : 'NotFound',
        data: { kind, i },
      }));
    }
  });
  after(async () => {
    for (const q of [queue, dlq]) await transport.purge!(q).catch(() => undefined);
    await transport.close();
  });

  it('redrives the group chosen by its typed filter, then deletes another one, and leaves the third', async () => {
    const { running, client } = await consoleOn(transport, dlq);
    try {
      const groups = (await client.get('/api/groups', { dlq })).body.groups as any[];
      assert.equal(groups.length, 3);
      const of = (error: string, exception: string) => groups.find((g) => g.error === error && g.exception === exception);
      const notFound = of('order <n> not found', 'NotFound');
      const stock = of('stock <n> reserved twice', 'NotFound');
      const moved = await client.post('/api/redrive', { dlq, matching: { group: notFound.id } });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.deepEqual([moved.body.redriven, moved.body.kept, moved.body.not_found], [300, 0, 0]);
      const onQueue = await transport.browse!(queue, 1000);
      assert.equal(onQueue.length, 300);
      assert.ok(onQueue.every((b) => JSON.parse(b.toString()).data.kind === 0), 'only the group was redriven');
      const deleted = await client.post('/api/delete', { dlq, matching: { group: stock.id } });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.deepEqual([deleted.body.deleted, deleted.body.not_found], [300, 0]);
      const left = await transport.browse!(dlq, 1000);
      assert.equal(left.length, 300);
      assert.ok(left.every((b) => JSON.parse(b.toString()).data.kind === 2), 'the third group is untouched');
      assert.equal((await client.post('/api/delete', { dlq, matching: 'all' })).status, 400, 'deleting everything is a purge');
      assert.equal((await client.post('/api/delete', { dlq, matching: { grup: stock.id } })).status, 400, 'an unknown filter key is refused');
    } finally {
      await running.close();
    }
  });
});
