import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { broker, closeTransports, envelopeBody, inspector, take, transport, uniqueQueue } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('redis browse and purge (dlq list|show|purge)', { skip: b.skip }, () => {
  let redis: Redis;
  before(() => {
    redis = inspector(b.url!);
  });
  after(async () => {
    await redis.quit();
  });
  afterEach(closeTransports);

  it('legacy: browse reads LRANGE 0 max-1 of <queue> in place, a __bq_frame unwrapped to its inner body', async () => {
    const q = uniqueQueue('l-browse');
    const { t } = transport(b.url!);
    const bodies = [0, 1, 2].map((n) => envelopeBody(URN, { n }));
    await t.publish({ body: bodies[0]!, queue: q, projection: {} as never });
    await t.publish({ body: bodies[1]!, queue: q, projection: {} as never, headers: { traceparent: TP } });
    await t.publish({ body: bodies[2]!, queue: q, projection: {} as never });
    const stored = await redis.lrangeBuffer(q, 0, -1);
    assert.deepEqual(await t.browse(q, 2), bodies.slice(0, 2));
    assert.deepEqual(await t.browse(q, 100), bodies);
    assert.deepEqual(await t.browse(q, 0), []);
    assert.deepEqual(await redis.lrangeBuffer(q, 0, -1), stored, 'nothing moved, the frame still stored as written');
    assert.deepEqual(await t.browse(uniqueQueue('l-none'), 10), []);
    await t.close();
  });

  it('legacy: purge deletes the ready list only and returns how many it held; reservations stay', async () => {
    const q = uniqueQueue('l-purge');
    const { t } = transport(b.url!);
    for (let n = 0; n < 4; n++) await t.publish({ body: envelopeBody(URN, { n }), queue: q, projection: {} as never });
    const [reserved] = await take(t, q); // left unsettled: on :processing with its deadline member
    assert.equal(await t.purge(q), 3);
    assert.equal(await redis.exists(q), 0);
    assert.deepEqual(await redis.lrangeBuffer(`${q}:processing`, 0, -1), [reserved!.body]);
    assert.equal(await redis.zcard(`${q}:processing:deadlines`), 1);
    assert.equal(await t.purge(q), 0, 'an empty queue purges nothing');
    await t.close();
  });

  it('zset: browse reads <prefix>queues:<queue>; delayed and reserved messages are not listed', async () => {
    const q = uniqueQueue('z-browse');
    const { t } = transport(b.url!, { layout: 'zset', prefix: 'app_' });
    const bodies = [0, 1, 2].map((n) => envelopeBody(URN, { n }));
    for (const body of bodies) await t.publish({ body, queue: q, projection: {} as never });
    await t.publish({ body: envelopeBody(URN, { later: true }), queue: q, projection: {} as never, delayMs: 60_000 });
    assert.deepEqual(await t.browse(q, 2), bodies.slice(0, 2));
    assert.deepEqual(await t.browse(q, 10), bodies);
    assert.equal(await redis.llen(`app_queues:${q}`), 3, 'left in place');
    await t.close();
  });

  it('zset: purge deletes the ready list and :delayed, returns their total, and leaves :reserved', async () => {
    const q = uniqueQueue('z-purge');
    const { t } = transport(b.url!, { layout: 'zset', prefix: 'app_' });
    for (let n = 0; n < 3; n++) await t.publish({ body: envelopeBody(URN, { n }), queue: q, projection: {} as never });
    for (let n = 0; n < 2; n++) await t.publish({ body: envelopeBody(URN, { later: n }), queue: q, projection: {} as never, delayMs: 60_000 });
    await take(t, q); // left unsettled: a :reserved member
    const keys = `app_queues:${q}`;
    assert.equal(await t.purge(q), 2 + 2);
    assert.equal(await redis.exists(keys, `${keys}:delayed`), 0);
    assert.equal(await redis.zcard(`${keys}:reserved`), 1);
    assert.equal(await t.purge(q), 0);
    await t.close();
  });
});
