import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import type { ScannedRecord } from '@babelqueue/core';
import { broker, envelopeBody, inspector, transport, uniqueQueue } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

async function all(iterable: AsyncIterable<ScannedRecord>): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of iterable) out.push(record);
  return out;
}

describe('redis scan, depth and remove (the DLQ console)', { skip: b.skip }, () => {
  let redis: Redis;
  before(() => {
    redis = inspector(b.url!);
  });
  after(async () => {
    await redis.quit();
  });

  it('legacy: scan reads from an offset across LRANGE windows, unwraps frames to body + headers, moves nothing', async () => {
    const q = uniqueQueue('l-scan');
    const { t } = transport(b.url!);
    const bodies = Array.from({ length: 1210 }, (_, n) => envelopeBody(URN, { n }));
    for (const [n, body] of bodies.entries()) {
      await t.publishRaw(q, body, n === 700 ? { traceparent: TP } : undefined);
    }
    const stored = await redis.lrangeBuffer(q, 0, -1);
    const records = await all(t.scan(q, { offset: 495 }));
    assert.equal(records.length, 1210 - 495);
    assert.deepEqual(records.map((r) => r.index), Array.from({ length: 1210 - 495 }, (_, i) => 495 + i));
    assert.ok(records.every((r, i) => r.body.equals(bodies[495 + i]!)), 'every body in order');
    assert.deepEqual(records[700 - 495]!.headers, { traceparent: TP });
    assert.deepEqual(records[0]!.headers, {});
    assert.equal(await t.depth(q), 1210);
    assert.deepEqual(await redis.lrangeBuffer(q, 0, -1), stored, 'nothing moved');
    assert.deepEqual(await all(t.scan(uniqueQueue('l-none'))), []);
    assert.equal(await t.depth(uniqueQueue('l-none')), 0);
    await redis.del(q);
    await t.close();
  });

  it('legacy: remove LREMs exactly one value, a framed one matched by its inner envelope; a gone record is false', async () => {
    const q = uniqueQueue('l-remove');
    const { t } = transport(b.url!);
    const [a, framed, c] = [0, 1, 2].map((n) => envelopeBody(URN, { n }));
    await t.publishRaw(q, a!);
    await t.publishRaw(q, framed!, { traceparent: TP });
    await t.publishRaw(q, c!);
    await t.publishRaw(q, a!);
    assert.equal(await t.remove(q, framed!), true);
    assert.equal(await t.remove(q, a!), true);
    assert.deepEqual((await all(t.scan(q))).map((r) => r.body), [c, a]);
    assert.equal(await t.remove(q, framed!), false);
    assert.equal(await t.depth(q), 2);
    await redis.del(q);
    await t.close();
  });

  it('zset: scan reads <prefix>queues:<queue> (no headers), depth is its LLEN, remove is one LREM', async () => {
    const q = uniqueQueue('z-scan');
    const { t } = transport(b.url!, { layout: 'zset', prefix: 'app_' });
    const bodies = [0, 1, 2].map((n) => envelopeBody(URN, { n }));
    for (const body of bodies) await t.publishRaw(q, body);
    await t.publish({ body: envelopeBody(URN, { later: true }), queue: q, projection: {} as never, delayMs: 60_000 });
    const records = await all(t.scan(q, { offset: 1 }));
    assert.deepEqual(records.map((r) => [r.index, r.body, r.headers]), [[1, bodies[1], {}], [2, bodies[2], {}]]);
    assert.equal(await t.depth(q), 3, 'the delayed message is not waiting');
    assert.equal(await t.remove(q, bodies[1]!), true);
    assert.deepEqual(await redis.lrangeBuffer(`app_queues:${q}`, 0, -1), [bodies[0], bodies[2]]);
    await t.purge(q);
    await t.close();
  });
});
