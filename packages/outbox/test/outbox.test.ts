import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { MemoryOutboxStore, Outbox, OutboxRelay, PostgresOutboxStore, transportPublisher } from '@babelqueue/outbox';
import { RedisTransport } from '@babelqueue/redis';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';

const URN = 'urn:babel:orders:created';
const envelope = (queue: string | undefined, n: number) => EnvelopeCodec.make(URN, { order_id: n, note: 'Zoë ✓' }, queue === undefined ? {} : { queue });

describe('Outbox and OutboxRelay (in memory)', () => {
  test('write stores the canonical bytes for meta.queue ("default" without one); the relay sends exactly them', async () => {
    const store = new MemoryOutboxStore();
    const outbox = new Outbox(store);
    const a = envelope('orders', 1);
    const b = envelope(undefined, 2);
    (b.meta as { queue?: string }).queue = '';
    await outbox.write(a);
    await outbox.write(b);
    const sent: [string, string][] = [];
    const relay = new OutboxRelay(async (body, queue) => void sent.push([body.toString('utf8'), queue]), store);
    assert.deepEqual(await relay.flush(), { published: 2, failed: 0 });
    assert.deepEqual(sent, [[EnvelopeCodec.encode(a), 'orders'], [EnvelopeCodec.encode(b), 'default']]);
    assert.deepEqual(await relay.flush(), { published: 0, failed: 0 });
  });

  test('a failing row is marked failed, backed off min(step × max(1, prior + 1), cap), left pending; the batch goes on', async () => {
    const store = new MemoryOutboxStore();
    for (let i = 0; i < 3; i++) await new Outbox(store).write(envelope('q', i));
    const waits: number[] = [];
    let calls = 0;
    const relay = new OutboxRelay(async () => {
      if (calls++ === 0) throw new Error('broker down');
    }, store, { sleep: async (ms) => void waits.push(ms) });
    assert.deepEqual(await relay.flush(), { published: 2, failed: 1 });
    assert.equal(store.pending(), 1);
    assert.deepEqual(waits, [50]);
    assert.deepEqual([0, 1, 2, 99, 100, 1000].map((n) => relay.backoffMs(n)), [50, 100, 150, 5000, 5000, 5000]);
    assert.equal(new OutboxRelay(async () => {}, store, { backoffStepMs: 10, backoffCapMs: 25 }).backoffMs(5), 25);
  });

  test('drain loops until a pass publishes nothing; batch 100 by default; the ceiling bounds it', async () => {
    const store = new MemoryOutboxStore();
    for (let i = 0; i < 250; i++) await new Outbox(store).write(envelope('q', i));
    const batches: number[] = [];
    const spy = {
      save: store.save.bind(store),
      fetchUnpublished: async (limit: number) => {
        const rows = await store.fetchUnpublished(limit);
        batches.push(rows.length);
        return rows;
      },
      markPublished: store.markPublished.bind(store),
      markFailed: store.markFailed.bind(store),
    };
    assert.deepEqual(await new OutboxRelay(async () => {}, spy).drain(2), { published: 200, failed: 0 });
    assert.deepEqual(await new OutboxRelay(async () => {}, spy).drain(), { published: 50, failed: 0 });
    assert.deepEqual(batches, [100, 100, 50, 0]);
    const failing = new MemoryOutboxStore();
    await new Outbox(failing).write(envelope('q', 1));
    const stuck = new OutboxRelay(async () => { throw new Error('down'); }, failing, { sleep: async () => {} });
    assert.deepEqual(await stuck.drain(), { published: 0, failed: 1 }, 'only failing rows left: one pass, then stop');
  });

  test('bad options are refused', () => {
    const store = new MemoryOutboxStore();
    assert.throws(() => new OutboxRelay(async () => {}, store, { batchSize: 0 }), RangeError);
    assert.throws(() => new OutboxRelay(async () => {}, store, { backoffStepMs: -1 }), RangeError);
  });
});

const postgresLab = broker('postgres');
const redisLab = broker('redis');

describe('PostgresOutboxStore on real PostgreSQL, relayed to real Redis', { skip: postgresLab.skip || redisLab.skip }, () => {
  let pool: pg.Pool;
  let redis: Redis;
  const tables: string[] = [];
  const queues: string[] = [];
  const newTable = () => {
    const t = uniqueQueue('outbox').replaceAll('-', '_');
    tables.push(t);
    return t;
  };
  before(() => {
    pool = new pg.Pool({ connectionString: postgresLab.url!, max: 6 });
    redis = new Redis(redisLab.url!);
  });
  after(async () => {
    for (const t of tables) {
      await pool.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
      await pool.query(`DROP FUNCTION IF EXISTS ${t}_mark()`);
    }
    if (queues.length > 0) await redis.del(...queues);
    await pool.end();
    redis.disconnect();
  });

  test('write joins the caller transaction: rolled back, no row; committed, the row; the relay publishes the stored bytes verbatim', async () => {
    const store = new PostgresOutboxStore(pool, { table: newTable() });
    await store.createTable();
    const outbox = new Outbox(store);
    const queue = uniqueQueue('outbox-q');
    queues.push(queue);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await outbox.write(envelope(queue, 1), client);
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      const kept = envelope(queue, 2);
      await outbox.write(kept, client);
      assert.equal(await store.pending(), 0, 'not visible before COMMIT');
      await client.query('COMMIT');
      assert.equal(await store.pending(), 1);
      const transport = new RedisTransport({ url: redisLab.url!, layout: 'legacy', logger: silentLogger });
      try {
        assert.deepEqual(await new OutboxRelay(transportPublisher(transport), store).drain(), { published: 1, failed: 0 });
      } finally {
        await transport.close();
      }
      const onBroker = await redis.lrangeBuffer(queue, 0, -1);
      assert.deepEqual(onBroker.map((b) => b.toString('utf8')), [EnvelopeCodec.encode(kept)]);
      assert.equal(await store.pending(), 0);
    } finally {
      client.release();
    }
  });

  test('concurrent claims never overlap (FOR UPDATE SKIP LOCKED); a failed row releases its claim and counts the attempt', async () => {
    const store = new PostgresOutboxStore(pool, { table: newTable() });
    await store.createTable();
    for (let i = 0; i < 30; i++) await new Outbox(store).write(envelope('q', i));
    const claims = await Promise.all([1, 2, 3].map(() => store.fetchUnpublished(10)));
    const ids = claims.flat().map((r) => r.id);
    assert.equal(ids.length, 30);
    assert.equal(new Set(ids).size, 30);
    assert.deepEqual(await store.fetchUnpublished(10), [], 'everything is claimed');
    await store.markFailed(claims[0]![0]!.id, 'Error: broker down');
    const again = await store.fetchUnpublished(10);
    assert.deepEqual(again.map((r) => [r.id, r.attempts]), [[claims[0]![0]!.id, 1]]);
  });

  test('two relays racing, one SIGKILLed mid-batch: every row published, none marked twice', async () => {
    const table = newTable();
    const store = new PostgresOutboxStore(pool, { table, claimMs: 1500 });
    await store.createTable();
    // Every change of published_at is recorded, so a second marking would show.
    const marksTable = newTable();
    await pool.query(`CREATE TABLE ${marksTable} (id BIGINT)`);
    await pool.query(`CREATE OR REPLACE FUNCTION ${table}_mark() RETURNS trigger AS $$
      BEGIN INSERT INTO ${marksTable} VALUES (NEW.id); RETURN NEW; END $$ LANGUAGE plpgsql`);
    await pool.query(`CREATE TRIGGER ${table}_marks AFTER UPDATE OF published_at ON ${table}
      FOR EACH ROW WHEN (NEW.published_at IS DISTINCT FROM OLD.published_at) EXECUTE FUNCTION ${table}_mark()`);
    const queue = uniqueQueue('outbox-race');
    queues.push(queue);
    const total = 60;
    const bodies = new Set<string>();
    for (let i = 0; i < total; i++) {
      const e = envelope(queue, i);
      bodies.add(EnvelopeCodec.encode(e));
      await new Outbox(store).write(e);
    }

    const fixture = fileURLToPath(new URL('./fixtures/relay.ts', import.meta.url));
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', fixture, postgresLab.url!, table, redisLab.url!, '1500', '30'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const transport = new RedisTransport({ url: redisLab.url!, layout: 'legacy', logger: silentLogger });
    try {
      // Let the doomed relay publish part of its first batch, then kill it without warning.
      const deadline = Date.now() + 60_000;
      while ((await redis.llen(queue)) < 3) {
        assert.ok(Date.now() < deadline, 'the child relay published nothing within 60 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));

      const relay = new OutboxRelay(transportPublisher(transport), store, { batchSize: 7 });
      while ((await store.pending()) > 0) {
        assert.ok(Date.now() < deadline, `rows still pending after 60 s: ${await store.pending()}`);
        await relay.drain();
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await transport.close();
    }
    const published = (await redis.lrangeBuffer(queue, 0, -1)).map((b) => b.toString('utf8'));
    assert.deepEqual(new Set(published), bodies, 'every row reached the broker, byte-for-byte');
    assert.ok(published.length >= total && published.length <= total + 10, `at-least-once: duplicates only from the killed batch (${published.length})`);
    const marks = await pool.query(`SELECT id, count(*)::int AS n FROM ${marksTable} GROUP BY id`);
    assert.equal(marks.rows.length, total, 'every row marked published');
    assert.ok(marks.rows.every((r) => r.n === 1), 'no row marked twice');
  });
});
