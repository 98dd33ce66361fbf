import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DeadLetterWriteError, withAttempts } from '@babelqueue/core';
import { reconcileAttempts } from '@babelqueue/core/binding';
import type { Redis } from 'ioredis';
import { broker, closeTransports, dueNow, envelopeBody, inspector, now, sleep, take, transport, uniqueQueue, until, withScores, zadd } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';

describe('redis zset layout (transport level)', { skip: b.skip }, () => {
  let redis: Redis;
  before(() => {
    redis = inspector(b.url!);
  });
  after(async () => {
    await redis.quit();
  });
  afterEach(closeTransports);

  it('publish pushes the bare envelope to queues:<name> and one notify token, headers not carried', async () => {
    const q = uniqueQueue('z-pub');
    const { t } = transport(b.url!, { layout: 'zset' });
    const body = envelopeBody(URN, { order_id: 1042 });
    await t.publish({ body, queue: q, projection: {} as never, headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    assert.deepEqual(await redis.lrangeBuffer(`queues:${q}`, 0, -1), [body]);
    assert.deepEqual(await redis.lrange(`queues:${q}:notify`, 0, -1), ['1']);
    assert.equal(await redis.exists(q), 0);
    await t.close();
  });

  it('the prefix goes in front of every key, as a Laravel connection prefix does', async () => {
    const q = uniqueQueue('z-prefix');
    const { t } = transport(b.url!, { layout: 'zset', prefix: 'laravel_database_' });
    const body = envelopeBody(URN);
    await t.publish({ body, queue: q, projection: {} as never });
    assert.deepEqual(await redis.lrangeBuffer(`laravel_database_queues:${q}`, 0, -1), [body]);
    const [d] = await take(t, q, async (d) => {
      assert.equal(await redis.zcard(`laravel_database_queues:${q}:reserved`), 1);
      await d.settle({ kind: 'ack' });
    });
    assert.ok(d, "d");
    assert.equal(await redis.zcard(`laravel_database_queues:${q}:reserved`), 0);
    await t.close();
  });

  it('reserve hands over the raw job; :reserved holds the cjson member with attempts + 1 at now + retry_after', async () => {
    const q = uniqueQueue('z-reserve');
    const { t } = transport(b.url!, { layout: 'zset', retryAfter: 30 });
    // A long integer cjson cannot keep: the handler still sees the original bytes.
    const body = Buffer.from(
      '{"job":"urn:babel:orders:created","trace_id":"t-1","data":{"big":12345678901234567,"list":[]},' +
        '"meta":{"id":"m-1","queue":"orders","lang":"php","schema_version":1,"created_at":1},"attempts":4}',
    );
    await redis.rpush(`queues:${q}`, body);
    await redis.rpush(`queues:${q}:notify`, 1);
    const before = now();
    const [d] = await take(t, q);
    assert.ok(d, "d");
    assert.deepEqual(d.body, body);
    assert.equal(d.poison, undefined);
    assert.equal(reconcileAttempts(t.rules.attempts, 4, d.nativeAttempts), 4, 'the runtime adds one: the handler sees job.attempts + 1');
    assert.deepEqual(d.headers, {});
    const members = await withScores(redis, `queues:${q}:reserved`);
    assert.equal(members.length, 1);
    const member = JSON.parse(members[0]![0].toString()) as { attempts: number; data: Record<string, unknown> };
    assert.equal(member.attempts, 5);
    assert.deepEqual(member.data.list, {}, 'cjson turns [] into {} in the member (the documented exception)');
    const score = Number(members[0]![1]);
    assert.ok(score >= before + 30 && score <= now() + 30, `deadline ${score}`);
    assert.equal(await redis.llen(`queues:${q}:notify`), 0, 'the pop takes one notify token');
    assert.equal(await redis.llen(`queues:${q}`), 0);
    await d.settle({ kind: 'ack' });
    assert.equal(await redis.zcard(`queues:${q}:reserved`), 0, 'ack = ZREM :reserved');
    await t.close();
  });

  it('retry releases in one script: ZREM :reserved and ZADD :delayed at floor(now) + ceil(delay), body bytes kept', async () => {
    const q = uniqueQueue('z-release');
    const { t } = transport(b.url!, { layout: 'zset' });
    const body = envelopeBody(URN, { n: 1 }, 0, q);
    await t.publish({ body, queue: q, projection: {} as never });
    const [d] = await take(t, q);
    const before = now();
    await d!.settle({ kind: 'retry', delayMs: 1500, attempts: 1, rule: 'retry' });
    assert.equal(await redis.zcard(`queues:${q}:reserved`), 0);
    const delayed = await withScores(redis, `queues:${q}:delayed`);
    assert.equal(delayed.length, 1);
    assert.deepEqual(delayed[0]![0], withAttempts(body, 1));
    assert.ok(Number(delayed[0]![1]) >= before + 2 && Number(delayed[0]![1]) <= now() + 2, "Number(delayed[0]![1]) >= before + 2 && Number(delayed[0]![1]) <= now() + 2");
    await t.close();
  });

  it('delayed publish: ZADD :delayed at floor(now) + ceil(delay), sub-second rounds up, no notify token', async () => {
    const q = uniqueQueue('z-later');
    const { t } = transport(b.url!, { layout: 'zset' });
    const body = envelopeBody(URN);
    const before = now();
    await t.publish({ body, queue: q, projection: {} as never, delayMs: 300 });
    const delayed = await withScores(redis, `queues:${q}:delayed`);
    assert.deepEqual(delayed[0]![0], body);
    const score = Number(delayed[0]![1]);
    assert.ok(score >= before + 1 && score <= now() + 1, `score ${score}`);
    assert.equal(await redis.exists(`queues:${q}:notify`), 0);
    assert.equal(await redis.exists(`queues:${q}`), 0, 'nothing migrates without a worker');
    await t.close();
  });

  it('a message published with delay 2 s reaches a blocked consumer no earlier than 1.0 s later, without a notify token', async () => {
    // The spec's "between 1.0 s and 3.5 s" on one host: the lower bound is the
    // score (floor(now) + 2 ≥ now + 1), checked here against the clock, which load
    // can only make later. The upper bound is the 1 s blocking slice followed by a
    // migrate, checked from the calls the loop makes (consume-loop.test.ts), not
    // from a wall-clock window a busy machine can miss.
    const q = uniqueQueue('z-window');
    const { t } = transport(b.url!, { layout: 'zset' });
    const ac = new AbortController();
    let receivedAt = 0;
    const consuming = t.consume(q, async (d) => {
      receivedAt = Date.now();
      await d.settle({ kind: 'ack' });
      ac.abort();
    }, { concurrency: 1, signal: ac.signal });
    try {
      const sentAt = Date.now();
      await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never, delayMs: 2000 });
      const [[, score]] = (await withScores(redis, `queues:${q}:delayed`)) as [[Buffer, string]];
      assert.equal(await redis.exists(`queues:${q}:notify`), 0, 'no token: the blocked consumer is not woken');
      await until(() => receivedAt > 0, 30_000, 'the delayed message');
      assert.ok(receivedAt - sentAt >= 1000, `received after ${receivedAt - sentAt} ms`);
      assert.ok(receivedAt >= Number(score) * 1000, 'not before its due second');
    } finally {
      ac.abort();
      await consuming;
    }
  });

  it('every pop migrates :delayed then :reserved, in chunks of 100, one notify token per element', async () => {
    const q = uniqueQueue('z-migrate');
    const { t } = transport(b.url!, { layout: 'zset' });
    const due = now() - 5;
    const args: (string | number)[] = [];
    for (let i = 0; i < 250; i++) args.push(due, `d${String(i).padStart(3, '0')}`);
    await zadd(redis, `queues:${q}:delayed`, ...args);
    await zadd(redis, `queues:${q}:delayed`, now() + 3600, 'later');
    await zadd(redis, `queues:${q}:reserved`, due, 'r-expired', now() + 3600, 'r-live');
    const [d] = await take(t, q, async (d) => d.settle({ kind: 'ack' }));
    assert.equal(d!.body.toString(), 'd000', 'the oldest delayed element pops first');
    assert.ok(d!.poison, 'not JSON: the reserve script flags it');
    const ready = await redis.lrange(`queues:${q}`, 0, -1);
    assert.equal(ready.length, 250, '249 delayed left + the recovered reservation');
    assert.equal(ready[0], 'd001');
    assert.equal(ready[248], 'd249');
    assert.equal(ready[249], 'r-expired', ':reserved migrates after :delayed');
    assert.equal(await redis.llen(`queues:${q}:notify`), 250, '251 tokens pushed, one taken by the pop');
    assert.deepEqual(await redis.zrange(`queues:${q}:delayed`, '0', '-1'), ['later']);
    assert.deepEqual(await redis.zrange(`queues:${q}:reserved`, '0', '-1'), ['r-live']);
    await t.close();
  });

  it('migrationBatchSize limits how many due members one migrate moves', async () => {
    const q = uniqueQueue('z-batch');
    const { t } = transport(b.url!, { layout: 'zset', migrationBatchSize: 10 });
    const args: (string | number)[] = [];
    for (let i = 0; i < 30; i++) args.push(now() - 5, `d${String(i).padStart(2, '0')}`);
    await zadd(redis, `queues:${q}:delayed`, ...args);
    await take(t, q, async (d) => d.settle({ kind: 'ack' }));
    assert.equal(await redis.llen(`queues:${q}`), 9);
    assert.equal(await redis.zcard(`queues:${q}:delayed`), 20);
    await t.close();
  });

  it('an expired reservation comes back with attempts + 1 (cjson-encoded), counted as an attempt', async () => {
    const q = uniqueQueue('z-recover');
    const { t } = transport(b.url!, { layout: 'zset', retryAfter: 1 });
    await t.publish({ body: envelopeBody(URN, {}, 0, q), queue: q, projection: {} as never });
    const [first] = await take(t, q); // never settled: the consumer "crashed"
    assert.ok(first, 'reserved once');
    await dueNow(redis, `queues:${q}:reserved`); // retry_after has passed
    const [again] = await take(t, q, async (d) => d.settle({ kind: 'ack' }));
    assert.ok(again, "again");
    const recovered = JSON.parse(again.body.toString()) as { attempts: number };
    assert.equal(recovered.attempts, 1, 'the recovered job carries attempts + 1, so the handler sees 2');
    assert.equal(await redis.zcard(`queues:${q}:reserved`), 0);
    await t.close();
  });

  it('retryAfter null scores the reservation +inf and never recovers it', async () => {
    const q = uniqueQueue('z-null');
    const { t } = transport(b.url!, { layout: 'zset', retryAfter: null });
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
    await take(t, q);
    assert.equal((await withScores(redis, `queues:${q}:reserved`))[0]![1], 'inf');
    const more = await take(t, q, undefined, { idleMs: 300 });
    assert.equal(more.length, 0);
    assert.equal(await redis.zcard(`queues:${q}:reserved`), 1);
    await t.close();
  });

  for (const [kind, raw] of [
    ['not JSON', Buffer.from('not json at all')],
    ['a JSON array', Buffer.from('[1,2,3]')],
    ['a JSON scalar', Buffer.from('42')],
    ['an object without attempts', Buffer.from('{"job":"urn:babel:x:y"}')],
    ['attempts that is not a number', Buffer.from('{"job":"urn:babel:x:y","attempts":"many"}')],
  ] as const) {
    it(`a body the reserve script cannot decode (${kind}) is reserved as itself and flagged poison`, async () => {
      const q = uniqueQueue('z-pcall');
      const { t } = transport(b.url!, { layout: 'zset' });
      await t.publishRaw(q, raw);
      const [d] = await take(t, q);
      assert.ok(d?.poison, "d?.poison");
      assert.deepEqual(d.body, raw);
      assert.deepEqual(await redis.zrangeBuffer(`queues:${q}:reserved`, '0', '-1'), [raw], 'member = the raw job: nothing lost');
      await d.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record: Buffer.from('{"raw":"x"}'), reason: 'poison' });
      assert.equal(await redis.zcard(`queues:${q}:reserved`), 0);
      assert.deepEqual(await redis.lrange(`queues:${q}.dlq`, 0, -1), ['{"raw":"x"}']);
      assert.deepEqual(await redis.lrange(`queues:${q}.dlq:notify`, 0, -1), ['1'], 'the DLQ is pushed like any Laravel queue');
      await t.close();
    });
  }

  it('a failed DLQ write neither acks nor releases: the member stays in :reserved', async () => {
    const q = uniqueQueue('z-dlqfail');
    const { t } = transport(b.url!, { layout: 'zset' });
    await redis.set(`queues:${q}.dlq`, 'a string, so RPUSH fails with WRONGTYPE');
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
    const [d] = await take(t, q);
    await assert.rejects(
      d!.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record: Buffer.from('{}'), reason: 'failed' }),
      (e: unknown) => e instanceof DeadLetterWriteError && /WRONGTYPE/.test(String((e.cause as Error).message)),
    );
    assert.equal(await redis.zcard(`queues:${q}:reserved`), 1);
    assert.equal(await redis.zcard(`queues:${q}:delayed`), 0);
    assert.equal(await redis.exists(`queues:${q}.dlq:notify`), 0);
    await d!.settle({ kind: 'unsettled', why: 'dead-letter write failed' });
    assert.equal(await redis.zcard(`queues:${q}:reserved`), 1);
    await t.close();
  });

  it('settling an expired reservation touches nothing and logs "reservation expired"', async () => {
    const q = uniqueQueue('z-expired');
    const { t, logger } = transport(b.url!, { layout: 'zset' });
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
    const [d1, d2] = await take(t, q, undefined, { max: 2, concurrency: 2 });
    await redis.del(`queues:${q}:reserved`); // as if recovery had moved them on
    await d1!.settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' });
    await d2!.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record: Buffer.from('{}'), reason: 'failed' });
    assert.equal(await redis.zcard(`queues:${q}:delayed`), 0);
    assert.equal(await redis.exists(`queues:${q}.dlq`), 0);
    assert.deepEqual(logger.lines.filter((l) => l.message === 'reservation expired').map((l) => l.fields.action), ['retry', 'dead-letter']);
    await t.close();
  });

  it('a delivery is settled once', async () => {
    const q = uniqueQueue('z-once');
    const { t } = transport(b.url!, { layout: 'zset' });
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
    const [d] = await take(t, q);
    await d!.settle({ kind: 'ack' });
    await assert.rejects(d!.settle({ kind: 'ack' }), /already settled/);
    await assert.rejects(
      (await (async () => {
        await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
        return (await take(t, q))[0]!;
      })()).settle({ kind: 'native-dead-letter', why: 'x' }),
      /no native dead-letter/,
    );
    await t.close();
  });

  it('byte-identical jobs are never one reservation: a twin waits on the ready list until the first is settled', async () => {
    // :reserved is a sorted set keyed by the member, so two identical jobs
    // reserved together would be folded into one and the first ack would
    // settle both (found by test/reliability's fuzzed bodies: a copy lost).
    const q = uniqueQueue('z-twins');
    const { t, logger } = transport(b.url!, { layout: 'zset' });
    const poison = Buffer.from('42');
    const env = envelopeBody(URN);
    for (const body of [poison, env, poison, env]) await t.publishRaw(q, body);
    const inFlight = new Set<string>();
    const seen: string[] = [];
    await take(t, q, async (d) => {
      const text = d.body.toString();
      assert.ok(!inFlight.has(text), `a twin of ${text} was reserved while the first was in flight`);
      inFlight.add(text);
      seen.push(text);
      await sleep(50);
      inFlight.delete(text);
      await d.settle({ kind: 'ack' });
    }, { max: 4, concurrency: 4 });
    assert.deepEqual(seen.sort(), [poison, poison, env, env].map(String).sort(), 'all four delivered');
    assert.equal(await redis.zcard(`queues:${q}:reserved`), 0);
    assert.equal(await redis.llen(`queues:${q}`), 0);
    assert.deepEqual(logger.lines.filter((l) => l.message === 'reservation expired'), [], 'every ack settled its own reservation');
    await t.close();
  });

  it('delivers in FIFO order and reserves several per call when slots are free', async () => {
    const q = uniqueQueue('z-fifo');
    const { t } = transport(b.url!, { layout: 'zset' });
    for (let i = 0; i < 30; i++) await t.publish({ body: Buffer.from(`{"job":"u","attempts":0,"n":${i}}`), queue: q, projection: {} as never });
    const order: number[] = [];
    await take(t, q, async (d) => {
      order.push((JSON.parse(d.body.toString()) as { n: number }).n);
      await d.settle({ kind: 'ack' });
    }, { max: 30, concurrency: 8 });
    assert.deepEqual(order, Array.from({ length: 30 }, (_, i) => i));
    await t.close();
  });
});
