import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DeadLetterWriteError, withAttempts } from '@babelqueue/core';
import type { Redis } from 'ioredis';
import { DelayedPublishUnsupportedError, legacyCleanup, unframe } from '../src/index.js';
import { broker, closeTransports, dueNow, envelopeBody, inspector, now, take, transport, uniqueQueue, withScores, zadd } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TOKEN = /^[0-9a-f]{32}$/;

describe('redis legacy layout (transport level)', { skip: b.skip }, () => {
  let redis: Redis;
  before(() => {
    redis = inspector(b.url!);
  });
  after(async () => {
    await redis.quit();
  });
  afterEach(closeTransports);

  it('publish RPUSHes the bare envelope to <name>, byte-for-byte', async () => {
    const q = uniqueQueue('l-pub');
    const { t } = transport(b.url!);
    const body = envelopeBody(URN, { s: 'é' });
    await t.publish({ body, queue: q, projection: {} as never });
    await t.publish({ body, queue: q, projection: {} as never, headers: { traceparent: '  ' } });
    assert.deepEqual(await redis.lrangeBuffer(q, 0, -1), [body, body], 'no usable header: no frame');
    await t.close();
  });

  it('publish with headers writes a __bq_frame, and reserve exposes the headers and the inner body', async () => {
    const q = uniqueQueue('l-frame');
    const { t } = transport(b.url!);
    const body = envelopeBody(URN);
    await t.publish({ body, queue: q, projection: {} as never, headers: { traceparent: TP } });
    const [stored] = await redis.lrangeBuffer(q, 0, -1);
    assert.equal(stored!.toString(), `{"__bq_frame":1,"headers":{"traceparent":"${TP}"},"body":${JSON.stringify(body.toString())}}`);
    const [d] = await take(t, q, async (d) => {
      assert.deepEqual(await redis.lrangeBuffer(`${q}:processing`, 0, -1), [stored], 'the frame string is the handle');
      await d.settle({ kind: 'ack' });
    });
    assert.deepEqual(d!.body, body);
    assert.deepEqual(d!.headers, { traceparent: TP });
    assert.equal(await redis.llen(`${q}:processing`), 0);
    assert.equal(await redis.zcard(`${q}:processing:deadlines`), 0);
    await t.close();
  });

  it('a delayed publish is refused with a clear error and nothing is written', async () => {
    const q = uniqueQueue('l-delay');
    const { t } = transport(b.url!);
    await assert.rejects(
      t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never, delayMs: 1000 }),
      (e: unknown) => e instanceof DelayedPublishUnsupportedError && /layout: "zset"/.test(e.message),
    );
    assert.equal(await redis.exists(q), 0);
    assert.deepEqual(t.capabilities, { delayedPublish: false, delayedRetry: false, retry: true, headers: true });
    await t.close();
  });

  it('reserves FIFO from the head, several per script call', async () => {
    const q = uniqueQueue('l-fifo');
    const { t } = transport(b.url!);
    for (let i = 0; i < 40; i++) await t.publish({ body: Buffer.from(`{"n":${i}}`), queue: q, projection: {} as never });
    const order: number[] = [];
    await take(t, q, async (d) => {
      order.push((JSON.parse(d.body.toString()) as { n: number }).n);
      await d.settle({ kind: 'ack' });
    }, { max: 40, concurrency: 16 });
    assert.deepEqual(order, Array.from({ length: 40 }, (_, i) => i));
    assert.equal(await redis.exists(q, `${q}:processing`, `${q}:processing:deadlines`), 0);
    await t.close();
  });

  it('a reservation moves the value to :processing and writes <32 hex token>:<raw> at floor(now) + retry_after', async () => {
    const q = uniqueQueue('l-member');
    const { t } = transport(b.url!, { retryAfter: 45 });
    const a = envelopeBody(URN, { a: 1 });
    const c = envelopeBody(URN, { c: 1 });
    await redis.rpush(q, a, c);
    const before = now();
    const got = await take(t, q, undefined, { max: 2, concurrency: 2 });
    assert.equal(got.length, 2);
    assert.deepEqual(await redis.lrangeBuffer(`${q}:processing`, 0, -1), [a, c]);
    const members = await withScores(redis, `${q}:processing:deadlines`);
    assert.equal(members.length, 2);
    const tokens = new Set<string>();
    for (const [member, score] of members) {
      const token = member.subarray(0, 32).toString();
      assert.match(token, TOKEN);
      tokens.add(token);
      assert.equal(member[32], 0x3a, 'a colon after the token: the raw value starts at byte 34');
      const raw = member.subarray(33);
      assert.ok(raw.equals(a) || raw.equals(c), "raw.equals(a) || raw.equals(c)");
      assert.ok(Number(score) >= before + 45 && Number(score) <= now() + 45, "Number(score) >= before + 45 && Number(score) <= now() + 45");
    }
    assert.equal(tokens.size, 2);
    await t.close();
  });

  it('the sweep before a reserve returns every expired body byte-for-byte, attempts untouched; memberless items are never touched', async () => {
    const q = uniqueQueue('l-sweep');
    const { t } = transport(b.url!, { retryAfter: 1 });
    const expired = envelopeBody(URN, { x: 1 }, 2);
    const orphan = Buffer.from('{"reserved":"by an older consumer"}');
    const forever = envelopeBody(URN, { inf: 1 });
    await redis.rpush(`${q}:processing`, orphan, expired, forever);
    await zadd(redis, `${q}:processing:deadlines`, now() - 1, Buffer.concat([Buffer.from('a'.repeat(32) + ':'), expired]));
    await zadd(redis, `${q}:processing:deadlines`, '+inf', Buffer.concat([Buffer.from('b'.repeat(32) + ':'), forever]));
    const [d] = await take(t, q, async (d) => d.settle({ kind: 'ack' }));
    assert.deepEqual(d!.body, expired, 'recovered byte-for-byte, attempts still 2');
    assert.equal(d!.nativeAttempts, undefined, 'the body\'s count is the count');
    assert.deepEqual(await redis.lrangeBuffer(`${q}:processing`, 0, -1), [orphan, forever]);
    assert.equal(await redis.zcard(`${q}:processing:deadlines`), 1, 'only the +inf member is left');
    await t.close();
  });

  it('a consumer that never settles gets its message recovered after retry_after', async () => {
    const q = uniqueQueue('l-recover');
    const { t } = transport(b.url!, { retryAfter: 1 });
    const body = envelopeBody(URN);
    await t.publish({ body, queue: q, projection: {} as never });
    await take(t, q);
    await dueNow(redis, `${q}:processing:deadlines`); // retry_after has passed
    const [again] = await take(t, q, async (d) => d.settle({ kind: 'ack' }));
    assert.deepEqual(again!.body, body);
    assert.equal(await redis.exists(q, `${q}:processing`, `${q}:processing:deadlines`), 0);
    await t.close();
  });

  it('retry republishes withAttempts(raw) to the tail in one script, ignoring the delay', async () => {
    const q = uniqueQueue('l-retry');
    const { t } = transport(b.url!);
    const body = Buffer.from('{"job":"urn:babel:x:y","trace_id":"t","data":{"big":12345678901234567890,"f":1.0},"meta":{},"attempts":0}');
    const other = envelopeBody(URN);
    await redis.rpush(q, body, other);
    const [d] = await take(t, q);
    await d!.settle({ kind: 'retry', delayMs: 60_000, attempts: 1, rule: 'retry' });
    assert.deepEqual(await redis.lrangeBuffer(q, 0, -1), [other, withAttempts(body, 1)]);
    assert.equal(await redis.llen(`${q}:processing`), 0);
    assert.equal(await redis.zcard(`${q}:processing:deadlines`), 0);
    await t.close();
  });

  it('retry of a framed value re-frames the edited body with its headers', async () => {
    const q = uniqueQueue('l-reframe');
    const { t } = transport(b.url!);
    const body = envelopeBody(URN);
    const riders = { traceparent: TP, tracestate: 'vendor=1' };
    await t.publish({ body, queue: q, projection: {} as never, headers: riders });
    const [d] = await take(t, q);
    await d!.settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' });
    const [again] = await take(t, q, async (d) => d.settle({ kind: 'ack' }));
    assert.deepEqual(again!.body, withAttempts(body, 1));
    assert.deepEqual(again!.headers, riders, 'both riders ride the retry copy');
    await t.close();
  });

  it('dead-letter RPUSHes the record to <dlq> and ends the reservation in one script', async () => {
    const q = uniqueQueue('l-dlq');
    const { t } = transport(b.url!);
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
    const [d] = await take(t, q);
    await d!.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record: Buffer.from('{"rec":1}'), reason: 'failed' });
    assert.deepEqual(await redis.lrange(`${q}.dlq`, 0, -1), ['{"rec":1}']);
    assert.equal(await redis.exists(`${q}:processing`, `${q}:processing:deadlines`), 0);
    await t.close();
  });

  it('dead-letter of a framed delivery writes the record in a frame with its riders; a bare one stays bare', async () => {
    const q = uniqueQueue('l-dlq-riders');
    const { t } = transport(b.url!);
    const riders = { traceparent: TP, tracestate: 'vendor=1' };
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never, headers: riders });
    await t.publish({ body: envelopeBody(URN), queue: q, projection: {} as never });
    const [framed, bare] = await take(t, q, undefined, { max: 2, concurrency: 2 });
    const record = Buffer.from('{"rec":1}');
    await framed!.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record, reason: 'failed' });
    await bare!.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record, reason: 'poison' });
    const [first, second] = await redis.lrangeBuffer(`${q}.dlq`, 0, -1);
    assert.equal(first!.toString(), `{"__bq_frame":1,"headers":${JSON.stringify(riders)},"body":"{\\"rec\\":1}"}`, 'the riders ride the record');
    assert.deepEqual(unframe(first!), { body: record, headers: riders, framed: true });
    assert.deepEqual(second, record, 'no riders: the bare record');
    await t.close();
  });

  it('a failed DLQ write leaves the reservation in place (recovery retries it later)', async () => {
    const q = uniqueQueue('l-dlqfail');
    const { t } = transport(b.url!);
    await redis.set(`${q}.dlq`, 'wrong type');
    const body = envelopeBody(URN);
    await t.publish({ body, queue: q, projection: {} as never });
    const [d] = await take(t, q);
    await assert.rejects(
      d!.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record: Buffer.from('{}'), reason: 'poison' }),
      (e: unknown) => e instanceof DeadLetterWriteError && e.queue === `${q}.dlq`,
    );
    assert.deepEqual(await redis.lrangeBuffer(`${q}:processing`, 0, -1), [body]);
    assert.equal(await redis.zcard(`${q}:processing:deadlines`), 1);
    assert.equal(await redis.get(`${q}.dlq`), 'wrong type');
    await t.close();
  });

  it('ack, retry and dead-letter of an expired reservation touch nothing and log "reservation expired"', async () => {
    const q = uniqueQueue('l-expired');
    const { t, logger } = transport(b.url!, { retryAfter: 1 });
    const bodies = [envelopeBody(URN, { i: 1 }), envelopeBody(URN, { i: 2 }), envelopeBody(URN, { i: 3 })];
    await redis.rpush(q, ...bodies);
    const held = await take(t, q, undefined, { max: 3, concurrency: 3 });
    await dueNow(redis, `${q}:processing:deadlines`); // retry_after has passed
    // Another consumer's sweep takes them back and reserves them again.
    const { t: other } = transport(b.url!, { retryAfter: 60 });
    assert.equal((await take(other, q, undefined, { max: 3, concurrency: 3 })).length, 3);
    const processing = await redis.lrangeBuffer(`${q}:processing`, 0, -1);
    await held[0]!.settle({ kind: 'ack' });
    await held[1]!.settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' });
    await held[2]!.settle({ kind: 'dead-letter', queue: `${q}.dlq`, record: Buffer.from('{}'), reason: 'failed' });
    assert.deepEqual(await redis.lrangeBuffer(`${q}:processing`, 0, -1), processing, "the other consumer's items stay");
    assert.equal(await redis.zcard(`${q}:processing:deadlines`), 3);
    assert.equal(await redis.exists(q, `${q}.dlq`), 0);
    assert.deepEqual(
      logger.lines.filter((l) => l.message === 'reservation expired').map((l) => l.fields.action),
      ['ack', 'retry', 'dead-letter'],
    );
    await Promise.all([t.close(), other.close()]);
  });

  it('retryAfter null writes +inf members that no sweep selects; legacyCleanup returns them', async () => {
    const q = uniqueQueue('l-null');
    const { t } = transport(b.url!, { retryAfter: null });
    const one = envelopeBody(URN, { n: 1 });
    const two = envelopeBody(URN, { n: 2 });
    await redis.rpush(q, one, two);
    await take(t, q, undefined, { max: 2, concurrency: 2 }); // the consumer "crashes" holding both
    const members = await withScores(redis, `${q}:processing:deadlines`);
    assert.deepEqual(members.map(([, s]) => s), ['inf', 'inf']);
    const { t: numeric } = transport(b.url!, { retryAfter: 0 });
    assert.equal((await take(numeric, q, undefined, { idleMs: 300 })).length, 0, 'even a retryAfter 0 sweep leaves +inf alone');
    // One body already left :processing by other means: its member is removed, the body not pushed.
    await redis.lrem(`${q}:processing`, 1, two);
    await assert.rejects(legacyCleanup(redis, q, { consumersStopped: false }), /consumer/);
    await assert.rejects(legacyCleanup(redis, q, {} as never), /consumersStopped: true/);
    assert.equal(await legacyCleanup(redis, q, { consumersStopped: true }), 2);
    assert.deepEqual(await redis.lrangeBuffer(q, 0, -1), [one]);
    assert.equal(await redis.exists(`${q}:processing`, `${q}:processing:deadlines`), 0);
    assert.equal(await legacyCleanup(redis, q, { consumersStopped: true }), 0);
    await Promise.all([t.close(), numeric.close()]);
  });

  it('the cleanup script is the one the specification publishes, byte for byte in its logic', async () => {
    const { LUA } = await import('../src/lua/scripts.generated.js');
    const body = LUA.legacyCleanup.split('\n').filter((l) => !l.startsWith('--')).join('\n').trim();
    assert.equal(
      body,
      [
        "local members = redis.call('ZRANGEBYSCORE', KEYS[3], '+inf', '+inf')",
        'for _, m in ipairs(members) do',
        '  local raw = string.sub(m, 34)',
        "  if redis.call('LREM', KEYS[2], 1, raw) == 1 then",
        "    redis.call('RPUSH', KEYS[1], raw)",
        '  end',
        "  redis.call('ZREM', KEYS[3], m)",
        'end',
        'return #members',
      ].join('\n'),
    );
  });
});
