import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { queryObjects } from 'node:v8';
import { Redis } from 'ioredis';
import type { Delivery } from '@babelqueue/core/binding';
import { RedisTransport } from '../src/index.js';
import { LUA } from '../src/lua/scripts.generated.js';
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

    it('an idle worker spends two script calls on a lone message: the reserve that takes it and its ack', async () => {
      // A reserve that fills fewer than its free slots found the ready list empty: the worker
      // waits for the next write (or the poll) instead of asking again at once, and an ack's
      // call that reserves nothing does not end that wait. Before, a lone message cost three.
      const q = uniqueQueue(`${layout}-lone`);
      const { client, counter } = countingClient(b.url!);
      const t = track(new RedisTransport({ redis: client, layout, logger: captureLogger() }));
      const producer = track(new RedisTransport({ url: b.url!, layout, logger: captureLogger() }));
      const stop = new AbortController();
      let handled = 0;
      const consuming = t.consume(q, async (d) => {
        handled++;
        await d.settle({ kind: 'ack' });
      }, { concurrency: 4, signal: stop.signal });
      await until(() => counter.scripts > 0, 20_000, 'the first (empty) reserve');
      const before = counter.scripts;
      const lone = 20;
      for (let i = 0; i < lone; i++) {
        await producer.publish({ body: envelopeBody(URN, { i }), queue: q, projection: {} as never });
        await until(async () => handled === i + 1 && (await redis.exists(reservedKey(q))) === 0, 20_000, `message ${i} acked`, 5);
      }
      const calls = counter.scripts - before;
      stop.abort();
      await consuming;
      // Two a message (three before); the rest of the allowance is for polls after a stall of 100 ms or more.
      assert.ok(calls <= 2 * lone + 10, `${calls} script calls for ${lone} lone messages`);
      await t.close();
      await producer.close();
      await client.quit();
    });

    it('at concurrency 16 the acks ride together: about one script call per 16 messages on a deep queue', async () => {
      const q = uniqueQueue(`${layout}-c16-calls`);
      const { client, counter } = countingClient(b.url!);
      const t = track(new RedisTransport({ redis: client, layout, logger: captureLogger() }));
      await redis.rpush(ready(q), ...Array.from({ length: 160 }, (_, i) => envelopeBody(URN, { i })));
      await t.consume(q, async (d) => d.settle({ kind: 'ack' }), { concurrency: 16, signal: new AbortController().signal, maxMessages: 160 });
      assert.ok(counter.scripts <= 13, `${counter.scripts} script calls for 160 messages`);
      assert.equal(await redis.exists(ready(q), reservedKey(q)), 0, 'every ack reached Redis');
      await t.close();
      await client.quit();
    });

    it('a settled delivery frees its slot at once: the next one runs from the read-ahead while the call carrying the ack is on its way, and settle resolves once Redis ran it', async () => {
      const q = uniqueQueue(`${layout}-overlap`);
      const client = track(new Redis(b.url!));
      // Every script reply comes 200 ms late, as over a slow link.
      const eval_ = client as unknown as { evalshaBuffer: (...args: unknown[]) => Promise<unknown> };
      const original = eval_.evalshaBuffer.bind(client);
      eval_.evalshaBuffer = async (...args: unknown[]) => {
        const reply = await original(...args);
        await sleep(200);
        return reply;
      };
      const t = track(new RedisTransport({ redis: client, layout, logger: captureLogger() }));
      await redis.rpush(ready(q), ...Array.from({ length: 4 }, (_, i) => envelopeBody(URN, { i })));
      /** The `data.i` of every message still reserved. */
      const stillReserved = async () => {
        const values = layout === 'zset' ? await redis.zrange(reservedKey(q), '0', '-1') : await redis.lrange(`${q}:processing`, 0, -1);
        return values.map((v) => (JSON.parse(v) as { data: { i: number } }).data.i);
      };
      const events: string[] = [];
      await t.consume(q, async (d) => {
        const i = (JSON.parse(d.body.toString()) as { data: { i: number } }).data.i;
        events.push(`start ${i}`);
        await d.settle({ kind: 'ack' });
        events.push(`acked ${i}`);
        if ((await stillReserved()).includes(i)) events.push(`${i} still reserved after its settle resolved`);
      }, { concurrency: 1, signal: new AbortController().signal, maxMessages: 4 });
      // Concurrency 1, 4 waiting: the first call reserves 1 for the slot and 1 read ahead, which
      // runs while the call carrying the first ack is on its way.
      assert.ok(events.indexOf('start 1') < events.indexOf('acked 0'), events.join(', '));
      assert.deepEqual(events.filter((e) => e.startsWith('start')), ['start 0', 'start 1', 'start 2', 'start 3'], 'FIFO');
      assert.deepEqual(events.filter((e) => e.includes('still reserved')), [], 'a settle resolves only once Redis ran the ack');
      assert.equal(await redis.exists(ready(q), reservedKey(q)), 0, 'every ack reached Redis');
      await t.close();
      await client.quit();
    });

    it('on abort it stops reserving, and every delivery handed over is settled first', async () => {
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

    /**
     * The read-ahead from the reserve that takes it to the stop that gives it
     * back: `fill` messages, `concurrency` slots; handlers before the `stopAt`-th
     * settle after 10 ms, the `stopAt`-th counts the reservations (`held`: min,
     * max) and stops the loop: `abort` (the handlers still running settle once
     * it has stopped) or `close()` (no handler ever settles: theirs stay
     * reserved). Either way what no handler saw goes back to the head of the
     * ready list, in order, at once.
     */
    const readAheadCases = [
      // 3 for the slots, then min(3 × 3, floor((10 - 3) / 2)) = 3 read ahead.
      { what: 'a deep queue: the free slots and what the depth allows', fill: 10, concurrency: 3, stopAt: 1, stop: 'abort', held: [6, 6] },
      // 2 for the slots, then floor((4 - 2) / 2) = 1: the rest is left to other consumers.
      { what: 'a short queue: half of what lies beyond the free slots', fill: 4, concurrency: 2, stopAt: 1, stop: 'abort', held: [3, 3] },
      // Running, acks on their way, and a read-ahead beyond the 2 slots.
      { what: 'mid-stream, handlers settling', fill: 20, concurrency: 2, stopAt: 5, stop: 'abort', held: [3, 8] },
      // 2 for the slots, then min(3 × 2, floor((20 - 2) / 2)) = 6: three more sets of slots.
      { what: 'close() with both handlers running', fill: 20, concurrency: 2, stopAt: 2, stop: 'close', held: [8, 8] },
    ] as const;

    for (const row of readAheadCases) {
      it(`read-ahead, ${row.what} (${row.fill} waiting, concurrency ${row.concurrency}, ${row.stop}): reserved as the rule says, given back in order`, async () => {
        const q = uniqueQueue(`${layout}-ahead`);
        const logger = captureLogger();
        const t = track(new RedisTransport({ url: b.url!, layout, logger }));
        const bodies = Array.from({ length: row.fill }, (_, i) => envelopeBody(URN, { i }));
        await redis.rpush(ready(q), ...bodies);
        const ac = new AbortController();
        const stopped = new Promise<void>((resolve) => ac.signal.addEventListener('abort', () => resolve(), { once: true }));
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let started = 0;
        let held = -1;
        const consuming = t.consume(q, async (d) => {
          const n = ++started;
          if (n === row.stopAt) {
            held = await redis.zcard(reservedKey(q));
            if (row.stop === 'abort') ac.abort();
          }
          if (row.stop === 'close') return gate;
          if (n < row.stopAt) await sleep(10);
          else await stopped;
          await d.settle({ kind: 'ack' });
        }, { concurrency: row.concurrency, signal: ac.signal });
        try {
          if (row.stop === 'close') {
            await until(() => held >= 0, 20_000, 'the handlers to run');
            await t.close();
          }
        } finally {
          release();
        }
        await consuming;
        const [min, max] = row.held;
        assert.ok(held >= min && held <= max, `${held} reserved at handler ${row.stopAt}, expected ${min}..${max}`);
        const running = row.stop === 'close' ? started : 0;
        assert.equal(await redis.zcard(reservedKey(q)), running, 'only deliveries handed over and never settled stay reserved');
        if (layout === 'legacy') assert.equal(await redis.llen(`${q}:processing`), running, ':processing holds only those');
        assert.deepEqual(await redis.lrangeBuffer(ready(q), 0, -1), bodies.slice(started), 'the rest, in FIFO order, original bytes');
        assert.ok(!logger.lines.some((l) => l.level === 'warn' || l.level === 'error'), JSON.stringify(logger.lines));

        // The next consumer takes them up in order.
        const next: number[] = [];
        const t2 = track(new RedisTransport({ url: b.url!, layout, logger: captureLogger() }));
        await t2.consume(q, async (d) => {
          next.push((JSON.parse(d.body.toString()) as { data: { i: number } }).data.i);
          await d.settle({ kind: 'ack' });
        }, { concurrency: 1, signal: new AbortController().signal, maxMessages: row.fill - started });
        assert.deepEqual(next, Array.from({ length: row.fill - started }, (_, i) => started + i));
        await t.close();
        await t2.close();
      });
    }

    it('on abort, when giving the read-ahead back fails, it is left reserved, not renewed, and recovered after retry_after', async () => {
      const q = uniqueQueue(`${layout}-giveback-fails`);
      const logger = captureLogger();
      const client = track(new Redis(b.url!));
      const t = track(new RedisTransport({ redis: client, layout, retryAfter: 1, logger }));
      const bodies = Array.from({ length: 10 }, (_, i) => envelopeBody(URN, { i }));
      for (const body of bodies) await redis.rpush(ready(q), body);
      const ac = new AbortController();
      const eval_ = client as unknown as { evalshaBuffer: (...args: unknown[]) => Promise<unknown> };
      const original = eval_.evalshaBuffer.bind(client);
      const giveBackSha = createHash('sha1').update(layout === 'zset' ? LUA.zsetGiveBack : LUA.legacyGiveBack).digest('hex');
      let handled = 0;
      await t.consume(q, async (d) => {
        handled++;
        // From now on the give-back script fails as if the connection dropped; acks still go through.
        eval_.evalshaBuffer = (...args: unknown[]) => (args[0] === giveBackSha ? Promise.reject(new Error('injected: connection lost')) : original(...args));
        ac.abort();
        await d.settle({ kind: 'ack' });
      }, { concurrency: 1, signal: ac.signal });
      eval_.evalshaBuffer = original;
      assert.equal(handled, 1);
      assert.ok(logger.lines.some((l) => l.level === 'warn' && /giving back unstarted deliveries failed/.test(l.message)), JSON.stringify(logger.lines));
      const held = await redis.zcard(reservedKey(q));
      assert.ok(held >= 1, `the read-ahead stays reserved (${held})`);
      // Not renewed: the consume loop is gone. A new consumer gets every message but the acked one after retry_after.
      const next: number[] = [];
      await t.consume(q, async (d) => {
        next.push((JSON.parse(d.body.toString()) as { data: { i: number } }).data.i);
        await d.settle({ kind: 'ack' });
      }, { concurrency: 1, signal: new AbortController().signal, maxMessages: 9, idleMs: 30_000 });
      assert.deepEqual([...next].sort((x, y) => x - y), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
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

describe('redis: the consume loop of an idle queue', { skip: b.skip }, () => {
  afterEach(closeTransports);

  it('keeps nothing from one poll to the next: an idle worker polls for hours', async () => {
    // The zset layout polls every blockTimeoutS (Redis times out blocked clients every 100 ms),
    // the legacy one once a second; the loop is the same. Promises alive on the heap, counted
    // after a GC (queryObjects runs one): a wait that left a waiter behind left three a poll.
    const q = uniqueQueue('idle-polls');
    const { client, counter } = countingClient(b.url!);
    const t = track(new RedisTransport({ redis: client, layout: 'zset', blockTimeoutS: 0.01, logger: captureLogger() }));
    const stop = new AbortController();
    const consuming = t.consume(q, (d) => d.settle({ kind: 'ack' }), { concurrency: 4, signal: stop.signal });
    await until(() => counter.scripts >= 3, 20_000, 'the worker polling');
    const promises = () => queryObjects(Promise, { format: 'count' }) as number;
    const before = { promises: promises(), polls: counter.scripts };
    await until(() => counter.scripts >= before.polls + 30, 60_000, '30 more polls');
    const polls = counter.scripts - before.polls;
    const grown = promises() - before.promises;
    stop.abort();
    await consuming;
    assert.ok(grown < polls / 2, `${grown} more promises alive after ${polls} polls`);
    await t.close();
    await client.quit();
  });
});
