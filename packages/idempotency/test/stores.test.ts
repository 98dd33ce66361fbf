// The shared idempotency stores on the lab's real Redis and PostgreSQL: the
// conformance manifest's sequences, the shared key/table layout, TTLs, and a
// store outage that must fail the message into the retry path (never skip it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createApp, idempotent, InMemoryTransport, type IdempotencyStore } from '@babelqueue/core';
import { PostgresIdempotencyStore, RedisIdempotencyStore } from '@babelqueue/idempotency';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { captureLogger } from '../../../test/support/capture-logger.js';
import { sharedSuite, ownSuite } from '../../core/test/conformance/suite.js';

const redisLab = broker('redis');
const postgresLab = broker('postgres');
const sequences = (sharedSuite ?? ownSuite).manifest.idempotency!.sequences.cases;

/** Replays one manifest sequence through idempotent() on `store`; ids are namespaced so runs never meet. */
async function replay(store: IdempotencyStore, sequence: (typeof sequences)[number], ns: string): Promise<void> {
  let effects = 0;
  let invoked = false;
  let outcome: 'ok' | 'throw' | undefined;
  const handler = idempotent(() => {
    invoked = true;
    effects++;
    if (outcome === 'throw') throw new Error('handler failed');
  }, store);
  for (const [i, delivery] of sequence.deliveries.entries()) {
    const id = delivery.meta_id === '' ? '' : `${ns}:${delivery.meta_id}`;
    if (delivery.forget_before === true) await store.forget(id);
    invoked = false;
    outcome = delivery.outcome;
    const run = handler({}, { id });
    if (delivery.outcome === 'throw') await assert.rejects(run, /handler failed/);
    else await run;
    assert.equal(invoked ? 'run' : 'skip', delivery.expect_effect, `delivery ${i}`);
  }
  assert.equal(effects, sequence.expected_effects);
}

/** A store outage: the message is retried, then dead-lettered as failed; the handler never ran and nothing was skipped. */
async function outageGoesToRetry(store: IdempotencyStore): Promise<void> {
  const transport = new InMemoryTransport({ redeliveryDelayMs: 0 });
  const logger = captureLogger();
  const app = createApp({ transport, queue: 'idem', logger, maxAttempts: 2, deadLetter: true });
  let ran = 0;
  app.handle('urn:babel:orders:created', idempotent(() => void ran++, store));
  await app.publish('urn:babel:orders:created', { n: 1 });
  await app.consume({ idleMs: 100 });
  assert.equal(ran, 0);
  assert.ok(logger.lines.some((l) => l.message === 'handler failed; retrying'), 'the first delivery went to the retry path');
  const [record] = transport.broker.ready('idem.dlq');
  assert.equal(JSON.parse(record!.body.toString()).dead_letter.reason, 'failed');
}

describe('RedisIdempotencyStore on real Redis', { skip: redisLab.skip }, () => {
  let redis: Redis;
  const ns = uniqueQueue('idem');
  before(() => {
    redis = new Redis(redisLab.url!);
  });
  after(async () => {
    const keys = await redis.keys(`bq:idemp:${ns}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  for (const sequence of sequences) {
    test(`manifest sequence ${sequence.name}`, () => replay(new RedisIdempotencyStore(redis), sequence, `${ns}:${sequence.name}`));
  }

  test('the key is bq:idemp:<meta.id>, without TTL by default; ttlMs sets PX', async () => {
    await new RedisIdempotencyStore(redis).remember(`${ns}:plain`);
    assert.equal(await redis.exists(`bq:idemp:${ns}:plain`), 1);
    assert.equal(await redis.pttl(`bq:idemp:${ns}:plain`), -1);
    await new RedisIdempotencyStore(redis, { ttlMs: 60_000 }).remember(`${ns}:ttl`);
    const ttl = await redis.pttl(`bq:idemp:${ns}:ttl`);
    assert.ok(ttl > 0 && ttl <= 60_000, String(ttl));
    assert.throws(() => new RedisIdempotencyStore(redis, { ttlMs: 0 }), RangeError);
  });

  test('an expired id runs again', async () => {
    const store = new RedisIdempotencyStore(redis, { ttlMs: 100 });
    let runs = 0;
    const handler = idempotent(() => void runs++, store);
    await handler({}, { id: `${ns}:short` });
    // Wait for Redis to expire the key (no fixed window: polled with a deadline).
    const deadline = Date.now() + 10_000;
    while ((await store.seen(`${ns}:short`)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await handler({}, { id: `${ns}:short` });
    assert.equal(runs, 2, 'the handler ran again once the id expired');
  });

  test('Redis down: the message fails into the retry path, never skipped', async () => {
    const down = new Redis({ port: 1, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    down.on('error', () => {}); // the refusals are what this test expects
    try {
      await outageGoesToRetry(new RedisIdempotencyStore(down));
    } finally {
      down.disconnect();
    }
  });
});

describe('PostgresIdempotencyStore on real PostgreSQL', { skip: postgresLab.skip }, () => {
  let pool: pg.Pool;
  const table = uniqueQueue('idem').replaceAll('-', '_');
  // The default table name in a schema of this run's own, so other runs and
  // the README example (which use public.babelqueue_idempotency) never meet it.
  const schema = uniqueQueue('s').replaceAll('-', '_');
  before(async () => {
    pool = new pg.Pool({ connectionString: postgresLab.url!, max: 4 });
    await pool.query(`CREATE SCHEMA ${schema}`);
  });
  after(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  test('the default table is babelqueue_idempotency(message_id PK, created_at, expires_at NULL)', async () => {
    assert.equal(new PostgresIdempotencyStore(pool).table, 'babelqueue_idempotency');
    const store = new PostgresIdempotencyStore(pool, { table: `${schema}.babelqueue_idempotency` });
    await store.createTable();
    await store.createTable(); // idempotent
    const { rows } = await pool.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'babelqueue_idempotency' ORDER BY ordinal_position`,
      [schema],
    );
    assert.deepEqual(rows.map((r) => [r.column_name, r.is_nullable]), [['message_id', 'NO'], ['created_at', 'NO'], ['expires_at', 'YES']]);
    const pk = await pool.query(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = '${schema}.babelqueue_idempotency'::regclass AND i.indisprimary`,
    );
    assert.deepEqual(pk.rows.map((r) => r.attname), ['message_id']);
    await store.remember('f1e2d3c4-b5a6-4789-90ab-cdef01234567');
    const row = await pool.query(`SELECT message_id, expires_at FROM ${schema}.babelqueue_idempotency`);
    assert.deepEqual(row.rows, [{ message_id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', expires_at: null }]);
  });

  for (const sequence of sequences) {
    test(`manifest sequence ${sequence.name}`, async () => {
      const store = new PostgresIdempotencyStore(pool, { table });
      await store.createTable();
      await replay(store, sequence, sequence.name);
    });
  }

  test('an expired row counts as unseen and is claimed again; purgeExpired removes expired rows', async () => {
    // A long TTL: expiry is forced by moving expires_at, so a slow machine cannot expire a row between two calls.
    const store = new PostgresIdempotencyStore(pool, { table, ttlMs: 600_000 });
    await store.createTable();
    await store.remember('ttl-1');
    assert.equal(await store.seen('ttl-1'), true);
    await pool.query(`UPDATE ${table} SET expires_at = now() - interval '1 second' WHERE message_id = 'ttl-1'`);
    assert.equal(await store.seen('ttl-1'), false);
    await store.remember('ttl-1');
    assert.equal(await store.seen('ttl-1'), true, 'the expired row was claimed again');
    await pool.query(`UPDATE ${table} SET expires_at = now() - interval '1 second' WHERE message_id = 'ttl-1'`);
    assert.equal(await store.purgeExpired(), 1);
    assert.throws(() => new PostgresIdempotencyStore(pool, { table: 'x; DROP TABLE y' }), RangeError);
  });

  test('PostgreSQL down: the message fails into the retry path, never skipped', async () => {
    const down = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'babelqueue', connectionTimeoutMillis: 2000 });
    try {
      await outageGoesToRetry(new PostgresIdempotencyStore(down));
    } finally {
      await down.end();
    }
  });
});
