import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { Delivery } from '@babelqueue/core';
import { RedisTransport } from '../src/index.js';
import { broker, captureLogger, envelopeBody, inspector, sleep, uniqueQueue } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';

/** A client whose script calls are counted. */
function countingClient(url: string) {
  const client = new Redis(url);
  const counter = { scripts: 0 };
  const eval_ = client as unknown as { evalshaBuffer: (...args: unknown[]) => Promise<unknown> };
  const original = eval_.evalshaBuffer.bind(client);
  eval_.evalshaBuffer = (...args: unknown[]) => {
    counter.scripts++;
    return original(...args);
  };
  return { client, counter };
}

for (const layout of ['legacy', 'zset'] as const) {
  const ready = (q: string) => (layout === 'zset' ? `queues:${q}` : q);
  const reservedKey = (q: string) => (layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`);

  describe(`redis ${layout}: the consume loop`, { skip: b.skip }, () => {
    let redis: Redis;
    before(() => {
      redis = inspector(b.url!);
    });
    after(async () => {
      await redis.quit();
    });

    it('keeps at most `concurrency` deliveries in flight and fills every slot', async () => {
      const q = uniqueQueue(`${layout}-conc`);
      const t = new RedisTransport({ url: b.url!, layout, logger: captureLogger() });
      for (let i = 0; i < 24; i++) await redis.rpush(ready(q), envelopeBody(URN, { i }));
      let now = 0;
      let peak = 0;
      await t.consume(q, async (d) => {
        peak = Math.max(peak, ++now);
        await sleep(20);
        now--;
        await d.settle({ kind: 'ack' });
      }, { concurrency: 4, signal: new AbortController().signal, maxMessages: 24 });
      assert.equal(peak, 4);
      assert.equal(await redis.exists(ready(q), reservedKey(q)), 0);
      await t.close();
    });

    it('an ack rides on the next reserve: about one script call per message at concurrency 1', async () => {
      const q = uniqueQueue(`${layout}-calls`);
      const { client, counter } = countingClient(b.url!);
      const t = new RedisTransport({ redis: client, layout, logger: captureLogger() });
      for (let i = 0; i < 50; i++) await redis.rpush(ready(q), envelopeBody(URN, { i }));
      await t.consume(q, (d) => d.settle({ kind: 'ack' }), { concurrency: 1, signal: new AbortController().signal, maxMessages: 50 });
      assert.ok(counter.scripts <= 52, `${counter.scripts} script calls for 50 messages`);
      assert.equal(await redis.exists(ready(q), reservedKey(q)), 0, 'every ack reached Redis');
      await t.close();
      await client.quit();
    });

    it('on abort it stops reserving, and every reserved delivery is handed over and settled first', async () => {
      const q = uniqueQueue(`${layout}-abort`);
      const t = new RedisTransport({ url: b.url!, layout, logger: captureLogger() });
      for (let i = 0; i < 40; i++) await redis.rpush(ready(q), envelopeBody(URN, { i }));
      const ac = new AbortController();
      const settledBeforeReturn: Delivery[] = [];
      let handled = 0;
      await t.consume(q, async (d) => {
        if (++handled === 6) ac.abort();
        await sleep(30);
        await d.settle({ kind: 'ack' });
        settledBeforeReturn.push(d);
      }, { concurrency: 3, signal: ac.signal });
      assert.equal(settledBeforeReturn.length, handled, 'nothing still running when consume resolves');
      assert.ok(handled >= 6 && handled <= 9, `handled ${handled}`);
      assert.equal(await redis.llen(ready(q)), 40 - handled, 'the rest stays on the ready list');
      assert.equal(await redis.exists(reservedKey(q)), 0, 'nothing left reserved');
      await t.close();
    });

    it('a handler crash inside onDelivery is logged and the loop goes on', async () => {
      const q = uniqueQueue(`${layout}-throw`);
      const logger = captureLogger();
      const t = new RedisTransport({ url: b.url!, layout, logger });
      for (let i = 0; i < 3; i++) await redis.rpush(ready(q), envelopeBody(URN, { i }));
      let n = 0;
      await t.consume(q, async (d) => {
        if (++n === 1) throw new Error('boom');
        await d.settle({ kind: 'ack' });
      }, { concurrency: 1, signal: new AbortController().signal, maxMessages: 3 });
      assert.equal(n, 3);
      assert.ok(logger.lines.some((l) => l.level === 'error' && /delivery handling failed/.test(l.message)), "logger.lines.some((l) => l.level === 'error' && /delivery handling failed/.test(l.message))");
      assert.equal(await redis.zcard(reservedKey(q)), 1, 'the unsettled one stays reserved for recovery');
      await t.close();
    });

    it(layout === 'legacy'
      ? 'an empty queue is sleep-polled: 100 ms, doubling after every empty poll, capped at 1 s'
      : 'an empty queue is waited on in blocking slices of at most 1 s, each followed by a migrate', async () => {
      const q = uniqueQueue(`${layout}-poll`);
      const { client, counter } = countingClient(b.url!);
      const t = new RedisTransport({ redis: client, layout, logger: captureLogger() });
      const ac = new AbortController();
      const consuming = t.consume(q, async () => {}, { concurrency: 1, signal: ac.signal });
      await sleep(3500);
      ac.abort();
      await consuming;
      // legacy: reserves at 0, 0.1, 0.3, 0.7, 1.5, 2.5, 3.5 s; zset: one reserve per 1 s slice.
      const [low, high] = layout === 'legacy' ? [5, 8] : [3, 5];
      assert.ok(counter.scripts >= low && counter.scripts <= high, `${counter.scripts} reserves in 3.5 s`);
      await t.close();
      await client.quit();
    });

    it('close() stops a running consume loop', async () => {
      const t = new RedisTransport({ url: b.url!, layout, logger: captureLogger() });
      const consuming = t.consume(uniqueQueue(`${layout}-close`), async () => {}, { concurrency: 2, signal: new AbortController().signal });
      await sleep(300);
      await t.close();
      await consuming;
    });

    it('refuses a concurrency that is not a positive integer', async () => {
      const t = new RedisTransport({ url: b.url!, layout, logger: captureLogger() });
      await assert.rejects(t.consume('x', async () => {}, { concurrency: 0, signal: new AbortController().signal }), RangeError);
      await t.close();
    });
  });
}
