import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createApp, withAttempts } from '@babelqueue/core';
import type { Redis } from 'ioredis';
import { RedisTransport, type RedisTransportOptions } from '../src/index.js';
import { broker, captureLogger, dueNow, envelopeBody, inspector, now, uniqueQueue, until, withScores } from './support/redis.js';
import { startStuckConsumer } from './support/stuck-consumer.js';

// Laravel's own RedisQueue is the reference of the zset layout. The peer needs
// php-cli, php-redis and Debian's php-illuminate-queue / php-illuminate-redis.
const b = broker('redis');
const peer = join(import.meta.dirname, 'peers', 'laravel-queue.php');
const php = spawnSync('php', ['-r', 'require "Illuminate/Queue/autoload.php"; require "Illuminate/Redis/autoload.php"; exit(extension_loaded("redis") ? 0 : 1);'], { timeout: 60_000 });
const phpSkip = php.status === 0
  ? false
  : 'SKIPPED (no Laravel peer): run scripts/peers (apt-get install php-cli php-redis php-illuminate-queue php-illuminate-redis)';
// Like a broker suite: a missing peer fails the run under CI=true.
if (phpSkip && process.env.CI === 'true') throw new Error(`the Laravel peer suite cannot run under CI=true: ${phpSkip}`);
if (phpSkip) process.stderr.write(`\n*** ${phpSkip} ***\n\n`);

const URN = 'urn:babel:orders:created';
/** Bounds one run of the PHP peer: a hung peer fails its test instead of blocking the file. */
const PEER_TIMEOUT_MS = 60_000;
/** Long enough that no process start or round trip can reach it; the tests move the score instead of waiting. */
const FAR_DELAY_S = 600;

interface Popped {
  job: Buffer;
  reserved: Buffer;
  attempts: number;
}

function laravel(args: Record<string, unknown>): { job: string | null; reserved?: string; attempts?: number } {
  const out = execFileSync('php', [peer, JSON.stringify({ url: b.url, ...args })], { encoding: 'utf8', timeout: PEER_TIMEOUT_MS });
  return JSON.parse(out) as { job: string | null; reserved?: string; attempts?: number };
}

function laravelPop(queue: string, then: 'delete' | 'release' | 'keep', extra: Record<string, unknown> = {}): Popped | null {
  const r = laravel({ action: 'pop', queue, then, ...extra });
  if (r.job === null) return null;
  return { job: Buffer.from(r.job, 'base64'), reserved: Buffer.from(r.reserved!, 'base64'), attempts: r.attempts! };
}

/** Pops until Laravel hands a job over (it may be on :delayed or :reserved until its score is due), or fails after the deadline. */
async function laravelPopWhenDue(queue: string, then: 'delete' | 'release' | 'keep', extra: Record<string, unknown> = {}): Promise<Popped> {
  let popped: Popped | null = null;
  await until(() => (popped = laravelPop(queue, then, extra)) !== null, 20_000, `Laravel to pop from ${queue}`, 100);
  return popped!;
}

function laravelPush(queue: string, payload: Buffer, extra: Record<string, unknown> = {}) {
  laravel({ action: 'push', queue, payload: payload.toString('base64'), ...extra });
}

function app(queue: string, options: Partial<RedisTransportOptions> = {}) {
  const logger = captureLogger();
  const transport = new RedisTransport({ url: b.url!, layout: 'zset', logger, ...options });
  return createApp({ transport, queue, logger, maxAttempts: 3 });
}

describe('redis zset layout beside Laravel\'s own RedisQueue', { skip: b.skip || phpSkip }, () => {
  let redis: Redis;
  before(() => {
    redis = inspector(b.url!);
  });
  after(async () => {
    await redis.quit();
  });

  const clean = async (q: string, prefix = '') =>
    assert.equal(await redis.exists(`${prefix}queues:${q}`, `${prefix}queues:${q}:reserved`, `${prefix}queues:${q}:delayed`, `${prefix}queues:${q}:notify`), 0);

  it('Laravel pops what the App published, byte for byte, attempts 1, and its delete empties :reserved', async () => {
    const q = uniqueQueue('lv-pop');
    const a = app(q);
    try {
      await a.publish(URN, { order_id: 1042, note: 'café ☕ / <b>' });
      const published = (await redis.lrangeBuffer(`queues:${q}`, 0, -1))[0]!;
      const popped = laravelPop(q, 'delete');
      assert.ok(popped, 'Laravel popped it');
      assert.deepEqual(popped.job, published);
      assert.equal(popped.attempts, 1);
      await clean(q);
    } finally {
      await a.close();
    }
  });

  it('the App consumes what Laravel pushed; the handler sees attempts 1', async () => {
    const q = uniqueQueue('lv-push');
    const body = envelopeBody(URN, { order_id: 7 }, 0, q);
    laravelPush(q, body);
    const a = app(q);
    try {
      const seen: { data: unknown; attempts: number; body: Buffer }[] = [];
      a.handle(URN, (data, m) => void seen.push({ data, attempts: m.attempts, body: m.body }));
      assert.equal(await a.consume({ maxMessages: 1 }), 1);
      assert.deepEqual(seen, [{ data: { order_id: 7 }, attempts: 1, body }]);
      await clean(q);
    } finally {
      await a.close();
    }
  });

  it('the App consumes Laravel\'s pushes in batches, and what it read ahead and gave back on stop Laravel pops next, byte for byte, attempts 1', async () => {
    const q = uniqueQueue('lv-batch');
    const bodies = Array.from({ length: 8 }, (_, i) => envelopeBody(URN, { order_id: i }, 0, q));
    for (const body of bodies) laravelPush(q, body);
    const t = new RedisTransport({ url: b.url!, layout: 'zset', logger: captureLogger() });
    try {
      const ac = new AbortController();
      let heldAtStop = 0;
      let handled = 0;
      await t.consume(q, async (d) => {
        handled++;
        heldAtStop = Math.max(heldAtStop, await redis.zcard(`queues:${q}:reserved`));
        ac.abort();
        await d.settle({ kind: 'ack' });
      }, { concurrency: 2, signal: ac.signal });
      assert.ok(heldAtStop > 2, `the App held a read-ahead beyond its 2 slots (${heldAtStop})`);
      assert.equal(await redis.zcard(`queues:${q}:reserved`), 0, 'no reservation left behind');
      assert.equal(await redis.llen(`queues:${q}:notify`), 8 - handled, 'one notify token per waiting job, as Laravel keeps them');
      for (const body of bodies.slice(handled)) {
        const popped = laravelPop(q, 'delete');
        assert.deepEqual(popped?.job, body, 'Laravel pops the next job in FIFO order, its bytes unchanged');
        assert.equal(popped?.attempts, 1, 'a read-ahead given back never counted as an attempt');
      }
      await clean(q);
    } finally {
      await t.close();
    }
  });

  it('a delayed publish of the App is migrated and popped by Laravel once due', async () => {
    const q = uniqueQueue('lv-later');
    const a = app(q);
    try {
      const before = now();
      await a.publish(URN, { n: 1 }, { delayMs: FAR_DELAY_S * 1000 });
      const after = now();
      const [[member, score]] = (await withScores(redis, `queues:${q}:delayed`)) as [[Buffer, string]];
      assert.ok(Number(score) >= before + FAR_DELAY_S && Number(score) <= after + FAR_DELAY_S, `due at floor(now) + ${FAR_DELAY_S}, got ${score}`);
      assert.equal(laravelPop(q, 'delete'), null, 'not due yet: Laravel leaves it on :delayed');
      assert.equal(await redis.zcard(`queues:${q}:delayed`), 1);
      await dueNow(redis, `queues:${q}:delayed`);
      const popped = laravelPop(q, 'delete');
      assert.equal(popped?.attempts, 1, 'due: Laravel migrates it and pops it');
      assert.deepEqual(popped.job, member, 'the bytes the App wrote');
      await clean(q);
    } finally {
      await a.close();
    }
  });

  it("Laravel's delayed push reaches a blocked App consumer", async () => {
    const q = uniqueQueue('lv-laterraw');
    laravel({ action: 'later', queue: q, delay: 1, payload: envelopeBody(URN, {}, 0, q).toString('base64') });
    const a = app(q);
    try {
      let got = 0;
      a.handle(URN, () => void got++);
      // Returns with the message; the idle bound only ends a failing run.
      await a.consume({ maxMessages: 1, idleMs: 30_000 });
      assert.equal(got, 1);
      await clean(q);
    } finally {
      await a.close();
    }
  });

  it("Laravel's release (its cjson member into :delayed) is consumed by the App with attempts 2", async () => {
    const q = uniqueQueue('lv-release');
    laravelPush(q, envelopeBody(URN, { big: 'x' }, 0, q));
    const popped = laravelPop(q, 'release', { delay: 0 });
    assert.equal(popped?.attempts, 1);
    const a = app(q);
    try {
      const seen: number[] = [];
      a.handle(URN, (_d, m) => void seen.push(m.attempts));
      await a.consume({ maxMessages: 1, idleMs: 30_000 });
      assert.deepEqual(seen, [2]);
      await clean(q);
    } finally {
      await a.close();
    }
  });

  it("the App's retry is picked up by Laravel with attempts 2 and the App's bytes (attempts set)", async () => {
    const q = uniqueQueue('lv-retry');
    const a = app(q);
    try {
      a.handle(URN, () => {
        throw new Error('once');
      });
      await a.publish(URN, { order_id: 1 });
      const original = (await redis.lrangeBuffer(`queues:${q}`, 0, -1))[0]!;
      await a.consume({ maxMessages: 1 });
      assert.equal(await redis.zcard(`queues:${q}:delayed`), 1);
      const popped = await laravelPopWhenDue(q, 'delete');
      assert.equal(popped.attempts, 2);
      assert.deepEqual(popped.job, withAttempts(original, 1));
      await clean(q);
    } finally {
      await a.close();
    }
  });

  it('a Laravel connection prefix and the prefix option address the same keys', async () => {
    const q = uniqueQueue('lv-prefix');
    const prefix = 'laravel_database_';
    laravelPush(q, envelopeBody(URN, {}, 0, q), { prefix });
    assert.equal(await redis.llen(`${prefix}queues:${q}`), 1);
    const a = app(q, { prefix });
    try {
      let got = 0;
      a.handle(URN, () => void got++);
      await a.consume({ maxMessages: 1 });
      await a.publish(URN, {});
      assert.equal(laravelPop(q, 'delete', { prefix })?.attempts, 1);
      assert.equal(got, 1);
      await clean(q, prefix);
    } finally {
      await a.close();
    }
  });

  it("a SIGKILLed App's read-ahead is migrated back by Laravel within seconds: byte for byte, attempts 1", async () => {
    const q = uniqueQueue('lv-kill-ahead');
    const bodies = Array.from({ length: 6 }, (_, i) => envelopeBody(URN, { order_id: i }, 0, q));
    for (const body of bodies) laravelPush(q, body);
    // One slot, stuck in its handler, retry_after 90 s; a read-ahead of min(3, floor((6 - 1) / 2)) = 2.
    const stuck = startStuckConsumer(b.url!, 'zset', q, URN, { concurrency: 1, retryAfter: 90 });
    try {
      await stuck.inHandler;
      assert.equal(await redis.zcard(`queues:${q}:reserved`), 3);
      stuck.proc.kill('SIGKILL');
      assert.equal(await stuck.exited, 'SIGKILL');
      // Laravel (retry_after 90 s as well) pops the three never reserved, then, once the App's
      // leases lapse, its own migrate returns the two read ahead: the raw jobs, uncounted.
      const popped: Buffer[] = [];
      for (let i = 0; i < 5; i++) {
        const one = await laravelPopWhenDue(q, 'delete', { retryAfter: 90 });
        assert.equal(one.attempts, 1, 'a read-ahead no handler began is not an attempt');
        popped.push(one.job);
      }
      assert.deepEqual(popped.slice(0, 3), bodies.slice(3), 'the never reserved first, in order');
      // A migrate moves members of one score in member order, not FIFO: compare the two as a set.
      const sorted = (list: Buffer[]) => list.map((x) => x.toString('base64')).sort();
      assert.deepEqual(sorted(popped.slice(3)), sorted(bodies.slice(1, 3)), 'the read-ahead, the bytes unchanged');
      // The one whose handler began keeps its deadline and Laravel's count.
      assert.equal(laravelPop(q, 'keep', { retryAfter: 90 }), null);
      await dueNow(redis, `queues:${q}:reserved`);
      const begun = await laravelPopWhenDue(q, 'delete', { retryAfter: 90 });
      assert.equal((JSON.parse(begun.job.toString()) as { data: { order_id: number } }).data.order_id, 0);
      assert.equal(begun.attempts, 2, 'recovered after its handler began: attempts + 1');
      await clean(q);
    } finally {
      stuck.proc.kill('SIGKILL');
    }
  });

  it('a reservation the App abandoned is recovered by Laravel with attempts + 1, and the reverse', async () => {
    const q = uniqueQueue('lv-recover');
    const t = new RedisTransport({ url: b.url!, layout: 'zset', retryAfter: FAR_DELAY_S, logger: captureLogger() });
    const a = createApp({ transport: t, queue: q, logger: captureLogger() });
    try {
      await t.publish({ body: envelopeBody(URN, {}, 0, q), queue: q, projection: {} as never });
      await t.consume(q, async () => {}, { concurrency: 1, signal: new AbortController().signal, maxMessages: 1 });
      assert.equal(laravelPop(q, 'keep', { retryAfter: FAR_DELAY_S }), null, 'reserved by the App and not expired: nothing to pop');
      await dueNow(redis, `queues:${q}:reserved`);
      const popped = laravelPop(q, 'keep', { retryAfter: FAR_DELAY_S });
      assert.equal(popped?.attempts, 2, 'recovered by Laravel: its job now carries attempts 1');
      await dueNow(redis, `queues:${q}:reserved`);
      const seen: number[] = [];
      a.handle(URN, (_d, m) => void seen.push(m.attempts));
      await a.consume({ maxMessages: 1 });
      assert.deepEqual(seen, [3], 'recovered by the App from Laravel\'s reservation: attempts + 1 again');
      await clean(q);
    } finally {
      await a.close();
    }
  });
});
