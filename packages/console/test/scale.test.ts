import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deadLetterReader, InMemoryTransport, silentLogger } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { KeyedLock } from '../src/keyed-lock.js';
import { ScanBudget } from '../src/scan-budget.js';
import { StatsScans } from '../src/stats.js';
import { startConsole, type RunningConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';

const redis = broker('redis');

/**
 * Answering within a time budget: every read request (a page, a search,
 * open-by-id, a step of the charts) answers after about `scanBudgetMs` with
 * what it found, how much it scanned and where to carry on. The budgets here
 * are a few ms over DLQs that take far longer to read, so the first answer is
 * always early; the assertions hold wherever each step happens to stop.
 */

const RECORDS = 20_000;
const NEEDLE_AT = 15_000;

function record(i: number): Buffer {
  return foreignRecord({
    urn: i % 3 === 0 ? 'urn:babel:payments:charge' : 'urn:babel:orders:created', queue: 'orders', lang: i % 2 === 0 ? 'python' : 'node', dlLang: 'node',
    id: `m-${i}`, failedAt: 1_700_000_000_000 + i * 60_000,
    data: { customer: i === NEEDLE_AT ? 'Zoë Quartermaine' : `customer ${i}` },
    error: i % 4 === 0 ? `order ${i} not found` : `gateway timeout after ${i % 30}s`, exception: i % 4 === 0 ? 'NotFound' : 'TimeoutError',
  });
}

async function consoleOn(transport: InMemoryTransport | RedisTransport, dlq: string, scanBudgetMs: number) {
  const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, scanBudgetMs, sampleEveryMs: 3_600_000, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')) });
  const client = new ConsoleClient(running.url);
  await client.open();
  return { running, client };
}

/** Follows a queue-order page's `next` as the page does, until it holds `limit` rows or the DLQ ends. */
async function searchOn(client: ConsoleClient, query: Record<string, string | number>, limit = 50) {
  let from = 0;
  const found: number[] = [];
  let scanned = 0;
  let steps = 0;
  for (;;) {
    const res = await client.get('/api/records', { ...query, from, limit: limit - found.length });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    steps += 1;
    scanned += res.body.scanned;
    found.push(...res.body.records.map((r: any) => r.index));
    if (!res.body.limited || found.length === limit) return { found, scanned, steps, last: res.body };
    assert.equal(res.body.next, from + res.body.scanned, 'next is the first record not read');
    from = res.body.next;
  }
}

describe('scale: reads answer within a time budget and carry on from a cursor (in-memory)', () => {
  const transport = new InMemoryTransport();
  const dlq = 'orders.dlq';
  let quick: { running: RunningConsole; client: ConsoleClient };
  let whole: { running: RunningConsole; client: ConsoleClient };

  before(async () => {
    for (let i = 0; i < RECORDS; i++) await transport.publishRaw(dlq, record(i));
    quick = await consoleOn(transport, dlq, 2);
    whole = await consoleOn(transport, dlq, 600_000);
  });
  after(async () => {
    await quick.running.close();
    await whole.running.close();
  });

  it('a search answers early with what it scanned and where it stopped, and carrying on finds the record', async () => {
    const session = await quick.client.get('/api/session');
    assert.equal(session.body.limits.budget_ms, 2);
    const first = await quick.client.get('/api/records', { dlq, find: 'quartermaine', limit: 50 });
    assert.equal(first.status, 200);
    assert.equal(first.body.stopped, 'time-budget');
    assert.deepEqual([first.body.limited, first.body.complete, first.body.has_more], [true, false, true]);
    assert.ok(first.body.scanned >= 1 && first.body.scanned < RECORDS, `scanned ${first.body.scanned}`);
    assert.equal(first.body.depth, RECORDS, 'the answer says of how many');
    assert.equal(first.body.next, first.body.scanned);
    const search = await searchOn(quick.client, { dlq, find: 'quartermaine' });
    assert.deepEqual(search.found, [NEEDLE_AT]);
    assert.equal(search.scanned, RECORDS, 'every record read once over all the steps');
    assert.ok(search.steps > 1, 'more than one step');
    assert.deepEqual([search.last.complete, search.last.stopped, search.last.next], [true, null, null]);
  });

  it('a filtered page carried on holds the same rows as one read without a budget', async () => {
    const stepped = await searchOn(quick.client, { dlq, lang: 'python', q: 'not found' }, 60);
    const once = await whole.client.get('/api/records', { dlq, lang: 'python', q: 'not found', limit: 60 });
    assert.equal(once.body.stopped, null);
    assert.deepEqual(stepped.found, once.body.records.map((r: any) => r.index));
  });

  it('open by id carries on the same way; an id that is nowhere is a 404 once the end is reached', async () => {
    let from = 0;
    let answer;
    let scanned = 0;
    for (;;) {
      answer = await quick.client.get('/api/find', { dlq, id: `m-${NEEDLE_AT}`, from });
      scanned += answer.body.scanned;
      if (answer.body.record !== null) break;
      assert.equal(answer.status, 200);
      assert.equal(answer.body.stopped, 'time-budget');
      assert.equal(answer.body.next, from + answer.body.scanned);
      from = answer.body.next;
    }
    assert.equal(answer.status, 200);
    assert.equal(answer.body.record.index, NEEDLE_AT);
    assert.equal(scanned, NEEDLE_AT + 1);
    const missing = await whole.client.get('/api/find', { dlq, id: 'no-such-id', from: 19_000 });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.scanned, 1000);
  });

  it('charts and groups are counted in steps: each answers the counts so far with a cursor, and the last equals one whole scan', async () => {
    for (const [path, filter] of [['/api/stats', {}], ['/api/groups', { lang: 'python' }]] as const) {
      let res = await quick.client.get(path, { dlq, ...filter });
      assert.equal(res.status, 200);
      assert.equal(res.body.complete, false, 'the first step answered early');
      assert.equal(res.body.stopped, 'time-budget');
      assert.match(res.body.cursor, /^[\w-]{12}$/);
      let steps = 1;
      let scanned = res.body.scanned;
      while (res.body.cursor !== null) {
        // The cursor names the scan's filter: a step carries on whatever else the request says.
        res = await quick.client.get(path, { dlq, cursor: res.body.cursor, lang: 'ignored' });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.ok(res.body.scanned >= scanned, 'the counts grow step by step');
        scanned = res.body.scanned;
        steps += 1;
      }
      const once = await whole.client.get(path, { dlq, ...filter });
      assert.equal(once.body.complete, true);
      assert.ok(steps > 1, 'more than one step');
      const { cursor: _a, stopped: _b, next: _c, history: _d, ...stepped } = res.body;
      const { cursor: _e, stopped: _f, next: _g, history: _h, ...whole_ } = once.body;
      assert.deepEqual(stepped, whole_);
      assert.equal(stepped.scanned, RECORDS);
    }
  });

  it('a cursor that is unknown is a 410 (start again); a sorted page that answers early says so and has no cursor', async () => {
    const gone = await quick.client.get('/api/stats', { dlq, cursor: 'AAAAAAAAAAAA' });
    assert.equal(gone.status, 410);
    assert.equal(gone.body.expired, true);
    const sorted = await quick.client.get('/api/records', { dlq, q: 'not found', sort: 'failed_at', dir: 'desc', limit: 5 });
    assert.equal(sorted.status, 200);
    assert.deepEqual([sorted.body.stopped, sorted.body.complete, sorted.body.next], ['time-budget', false, null]);
    const times = sorted.body.records.map((r: any) => r.failed_at);
    assert.deepEqual(times, [...times].sort((a: number, b: number) => b - a), 'sorted among the records scanned');
  });
});

describe('scale: the parts that keep a request short and its memory bounded', () => {
  it('ScanBudget stops at the time budget or the scan limit, never before the first record', () => {
    let now = 0;
    const budget = new ScanBudget(100, 5, () => now);
    now = 1000;
    assert.equal(budget.stopBefore(0), null, 'every request reads at least one record');
    assert.equal(budget.stopBefore(1), 'time-budget');
    now = 0;
    const roomy = new ScanBudget(100, 5, () => now);
    assert.equal(roomy.stopBefore(4), null);
    assert.equal(roomy.stopBefore(5), 'scan-limit');
  });

  it('StatsScans keeps at most 16 open chart scans and drops one idle for 2 minutes', async () => {
    const transport = new InMemoryTransport();
    for (let i = 0; i < 10; i++) await transport.publishRaw('a.dlq', record(i));
    const source = deadLetterReader(transport);
    let now = 0;
    const scans = new StatsScans(() => now);
    // A budget that stops after every record (the clock runs 1 ms per read of it).
    const stepping = () => new ScanBudget(0, 100, () => now++);
    const cursors: string[] = [];
    for (let i = 0; i < 20; i++) cursors.push((await scans.step(source, 'a.dlq', {}, undefined, stepping())).cursor!);
    assert.equal(scans.size, StatsScans.KEPT);
    await assert.rejects(scans.step(source, 'a.dlq', {}, cursors[0], stepping()), { name: 'ExpiredCursorError' }, 'the oldest went first');
    const later = await scans.step(source, 'a.dlq', {}, cursors[19], stepping());
    assert.equal(later.scanned, 2);
    now += StatsScans.IDLE_MS + 1;
    await assert.rejects(scans.step(source, 'a.dlq', {}, cursors[19], stepping()), { name: 'ExpiredCursorError' });
    assert.equal(scans.size, 0);
  });

  it('KeyedLock: reads share a DLQ; an action waits for the reads before it and holds up the reads after it', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      return { open, opened };
    };
    const first = gate();
    const second = gate();
    const action = gate();
    const r1 = lock.read('q', async () => (log.push('r1 start'), await first.opened, log.push('r1 end')));
    const r2 = lock.read('q', async () => (log.push('r2 start'), await second.opened, log.push('r2 end')));
    const w = lock.run('q', async () => (log.push('w start'), await action.opened, log.push('w end')));
    const r3 = lock.read('q', async () => log.push('r3'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(log, ['r1 start', 'r2 start'], 'two reads at once; the action waits');
    second.open();
    await r2;
    assert.deepEqual(log, ['r1 start', 'r2 start', 'r2 end'], 'the action waits for every read before it');
    first.open();
    await r1;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(log.at(-1), 'w start');
    assert.ok(!log.includes('r3'), 'a read after the action waits for it');
    action.open();
    await Promise.all([w, r3]);
    assert.deepEqual(log.slice(-2), ['w end', 'r3']);
  });
});

describe('scale: a search over Redis carries on across LRANGE windows read ahead', { skip: redis.skip }, () => {
  const queue = uniqueQueue('console-scale');
  const dlq = `${queue}.dlq`;
  let transport: RedisTransport;
  let quick: { running: RunningConsole; client: ConsoleClient };

  before(async () => {
    transport = new RedisTransport({ url: redis.url!, logger: silentLogger });
    await transport.connect({ timeoutMs: 10_000 });
    const bodies = Array.from({ length: 3000 }, (_, i) => record(i === 2_600 ? NEEDLE_AT : i + 100_000));
    await transport.client.rpush(dlq, ...bodies);
    quick = await consoleOn(transport, dlq, 2);
  });
  after(async () => {
    await quick?.running.close();
    await transport?.client.del(dlq);
    await transport?.close();
  });

  it('finds the record at 2,601 of 3,000 after reading each record once, and a page that stops early leaves nothing behind', async () => {
    const search = await searchOn(quick.client, { dlq, find: 'quartermaine' });
    assert.deepEqual(search.found, [2_600]);
    assert.equal(search.scanned, 3000);
    // A page of 1 row stops inside the first window with the next one in flight.
    for (let i = 0; i < 5; i++) assert.equal((await quick.client.get('/api/records', { dlq, limit: 1 })).body.records.length, 1);
    const chart = await quick.client.get('/api/stats', { dlq });
    assert.equal(chart.status, 200);
  });
});
