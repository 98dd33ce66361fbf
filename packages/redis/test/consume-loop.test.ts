import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { Delivery } from '@babelqueue/core';
import { RedisTransport } from '../src/index.js';
import { broker, captureLogger, closeTransports, envelopeBody, inspector, sleep, track, uniqueQueue, until } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';

/** A client whose script calls are counted. */
function countingClient(url: string) {
  const client = track(new Redis(url));
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
    afterEach(closeTransports);

    it('keeps at most `concurrency` deliveries in flight and fills every slot', async () => {
      const q = uniqueQueue(`${layout}-conc`);
      const t = track(new RedisTransport({ url: b.url!, layout, logger: captureLogger() }));
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
      const t = track(new RedisTransport({ redis: client, layout, logger: captureLogger() }));
      for (let i = 0; i < 50; i++) await redis.rpush(ready(q), envelopeBody(URN, { i }));
      await t.consume(q, (d) => d.settle({ kind: 'ack' }), { concurrency: 1, signal: new AbortController().signal, maxMessages: 50 });
      assert.ok(counter.scripts <= 52, `${counter.scripts} script calls for 50 messages`);
      assert.equal(await redis.exists(ready(q), reservedKey(q)), 0, 'every ack reached Redis');
      await t.close();
      await client.quit();
    });

    it('on abort it stops reserving, and every reserved delivery is handed over and settled first', async () => {
      const q = uniqueQueue(`${layout}-abort`);
      const t = track(new RedisTransport({ url: b.url!, layout, logger: captureLogger() }));
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
      const t = track(new RedisTransport({ url: b.url!, layout, logger }));
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
      // The schedule is read from what the loop asks for, not from wall-clock
      // counts: timers and round trips stretch under load, the schedule does not.
      const q = uniqueQueue(`${layout}-poll`);
      const events: string[] = [];
      const client = track(new Redis(b.url!));
      const evalsha = (client as unknown as { evalshaBuffer: (...args: unknown[]) => Promise<unknown> });
      const reserve = evalsha.evalshaBuffer.bind(client);
      evalsha.evalshaBuffer = (...args: unknown[]) => {
        events.push('reserve');
        return reserve(...args);
      };
      const duplicate = client.duplicate.bind(client);
      client.duplicate = (...args: Parameters<Redis['duplicate']>) => {
        const blocking = duplicate(...args);
        const call = blocking.callBuffer.bind(blocking) as (...a: unknown[]) => Promise<unknown>;
        (blocking as unknown as { callBuffer: (...a: unknown[]) => Promise<unknown> }).callBuffer = (...a: unknown[]) => {
          if (String(a[0]).toUpperCase() === 'BLPOP') events.push(`blpop ${String(a[2])} s`);
          return call(...a);
        };
        return blocking;
      };
      const t = track(new RedisTransport({ redis: client, layout, logger: captureLogger() }));
      const polls: number[] = [];
      const impl = (t as unknown as { impl: { reserver(queue: string): { idle(ms: number, s: AbortSignal): Promise<void> } } }).impl;
      const makeReserver = impl.reserver.bind(impl);
      impl.reserver = (queue: string) => {
        const reserver = makeReserver(queue);
        const idle = reserver.idle.bind(reserver);
        reserver.idle = (ms: number, signal: AbortSignal) => {
          const poll = (reserver as unknown as { pollMs?: number }).pollMs;
          if (poll !== undefined) polls.push(Math.min(ms, poll));
          return idle(ms, signal);
        };
        return reserver;
      };
      const ac = new AbortController();
      const consuming = t.consume(q, async () => {}, { concurrency: 1, signal: ac.signal });
      try {
        if (layout === 'legacy') {
          await until(() => polls.length >= 7, 30_000, 'seven empty polls');
          assert.deepEqual(polls.slice(0, 7), [100, 200, 400, 800, 1000, 1000, 1000]);
        } else {
          await until(() => events.filter((e) => e.startsWith('blpop')).length >= 3, 30_000, 'three blocking slices');
          const slices = events.slice(0, 6);
          assert.deepEqual(slices, ['reserve', 'blpop 1 s', 'reserve', 'blpop 1 s', 'reserve', 'blpop 1 s'], 'a reserve (which migrates) before and after every slice of at most 1 s');
        }
      } finally {
        ac.abort();
        await consuming;
        await t.close();
        await client.quit();
      }
    });

    it('close() stops a running consume loop', async () => {
      const t = track(new RedisTransport({ url: b.url!, layout, logger: captureLogger() }));
      const consuming = t.consume(uniqueQueue(`${layout}-close`), async () => {}, { concurrency: 2, signal: new AbortController().signal });
      await sleep(300);
      await t.close();
      await consuming;
    });

    it('refuses a concurrency that is not a positive integer', async () => {
      const t = track(new RedisTransport({ url: b.url!, layout, logger: captureLogger() }));
      await assert.rejects(t.consume('x', async () => {}, { concurrency: 0, signal: new AbortController().signal }), RangeError);
      await t.close();
    });
  });
}
