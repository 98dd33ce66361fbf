import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '@babelqueue/core';
import { RedisTransport } from '../src/index.js';
import { broker, captureLogger, dueNow, inspector, now, uniqueQueue, withScores } from './support/redis.js';
import { until } from '../../../test/support/until.js';
import { startStuckConsumer as start } from './support/stuck-consumer.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';

const startStuckConsumer = (layout: string, queue: string, concurrency = 1, retryAfter = 1, pass = 0) =>
  start(b.url!, layout, queue, URN, { concurrency, retryAfter, pass });

for (const [layout, expectedAttempts] of [['legacy', 1], ['zset', 2]] as const) {
  describe(`redis ${layout}: a consumer killed with SIGKILL mid-handler`, { skip: b.skip }, () => {
    it(`loses nothing: the message is recovered after retry_after (handler sees attempts ${expectedAttempts})`, async () => {
      const q = uniqueQueue(`${layout}-kill`);
      const redis = inspector(b.url!);
      const logger = captureLogger();
      const transport = new RedisTransport({ url: b.url!, layout, retryAfter: 1, logger });
      const app = createApp({ transport, queue: q, logger });
      const stuck = startStuckConsumer(layout, q);
      try {
        const id = await app.publish(URN, { order_id: 7 });
        await stuck.inHandler;
        stuck.proc.kill('SIGKILL');
        assert.equal(await stuck.exited, 'SIGKILL');

        const got: { id: string; attempts: number }[] = [];
        app.handle(URN, (_d, m) => void got.push({ id: m.id, attempts: m.attempts }));
        // Returns with the recovered message (retry_after 1 s); the bound only ends a failing run.
        await app.consume({ maxMessages: 1, idleMs: 30_000 });
        assert.deepEqual(got, [{ id, attempts: expectedAttempts }]);
        const left = layout === 'zset' ? [`queues:${q}`, `queues:${q}:reserved`] : [q, `${q}:processing`, `${q}:processing:deadlines`];
        assert.equal(await redis.exists(...left), 0);
      } finally {
        stuck.proc.kill('SIGKILL');
        await app.close();
        await redis.quit();
      }
    });
  });
}

for (const layout of ['legacy', 'zset'] as const) {
  describe(`redis ${layout}: a consumer killed with SIGKILL holding a read-ahead no handler began`, { skip: b.skip }, () => {
    it('the read-ahead is back within seconds, attempts not counted; the begun ones after retry_after; each exactly once', async () => {
      const q = uniqueQueue(`${layout}-kill-batch`);
      const redis = inspector(b.url!);
      const logger = captureLogger();
      // This consumer reserves for 60 s, so its own read-ahead never lapses on a busy machine.
      const transport = new RedisTransport({ url: b.url!, layout, retryAfter: 60, logger });
      const app = createApp({ transport, queue: q, logger });
      const reservedKey = layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`;
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(await app.publish(URN, { order_id: i }));
      // Two slots, both stuck, with the default retry_after (90 s); the first reserve also took a
      // read-ahead of min(3 × 2, floor((10 - 2) / 2)) = 4.
      const stuck = startStuckConsumer(layout, q, 2, 90);
      try {
        await stuck.inHandler;
        const held = await redis.zcard(reservedKey);
        assert.equal(held, 6, `the killed consumer held 2 in its handlers and 4 read ahead, not ${held}`);
        stuck.proc.kill('SIGKILL');
        assert.equal(await stuck.exited, 'SIGKILL');

        const got: { id: string; attempts: number }[] = [];
        app.handle(URN, (_d, m) => void got.push({ id: m.id, attempts: m.attempts }));
        // The four never reserved come at once, the four read ahead once their lease lapses (a few
        // seconds), long before the 90 s of retry_after; the bound only ends a failing run.
        await app.consume({ maxMessages: 8, idleMs: 25_000 });
        assert.deepEqual(got.map((g) => g.id).sort(), ids.slice(2).sort(), 'every message no handler began, each once');
        assert.deepEqual(got.map((g) => g.attempts), [1, 1, 1, 1, 1, 1, 1, 1], 'no attempt counted for a message no handler began');

        // The two whose handlers began keep their retry_after deadline: move the clock through it.
        assert.equal(await redis.zcard(reservedKey), 2);
        await dueNow(redis, reservedKey);
        got.length = 0;
        await app.consume({ maxMessages: 2, idleMs: 25_000 });
        assert.deepEqual(got.map((g) => g.id).sort(), ids.slice(0, 2).sort());
        // Zset: a begun pop counts as an attempt (Laravel's rule); legacy recovery counts none.
        assert.deepEqual(got.map((g) => g.attempts), layout === 'zset' ? [2, 2] : [1, 1]);
        const left = layout === 'zset' ? [`queues:${q}`, `queues:${q}:reserved`] : [q, `${q}:processing`, `${q}:processing:deadlines`];
        assert.equal(await redis.exists(...left), 0);
      } finally {
        stuck.proc.kill('SIGKILL');
        await app.close();
        await redis.quit();
      }
    });
  });
}

for (const layout of ['legacy', 'zset'] as const) {
  describe(`redis ${layout}: a read-ahead delivery whose handler began, then SIGKILL`, { skip: b.skip }, () => {
    it('has its full retry_after reservation (zset: the pop\'s member); the rest of the read-ahead is back within seconds', async () => {
      const q = uniqueQueue(`${layout}-kill-begun`);
      const redis = inspector(b.url!);
      const logger = captureLogger();
      const transport = new RedisTransport({ url: b.url!, layout, retryAfter: 60, logger });
      const app = createApp({ transport, queue: q, logger });
      const reservedKey = layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`;
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(await app.publish(URN, { order_id: i }));
      // One slot: the first message's handler returns, the second (read ahead) hangs.
      const stuck = startStuckConsumer(layout, q, 1, 90, 1);
      const holding = async (id: string) => (await withScores(redis, reservedKey)).find(([m]) => m.includes(id));
      try {
        await stuck.inHandler;
        await until(async () => (await holding(ids[0]!)) === undefined, 30_000, 'the first message acked');
        // Its full reservation goes out in the event-loop turn after the handler began: wait for it
        // (before the lease it was there from the reserve; with the lease and no begin it never comes).
        const full = async () => {
          const begun = await holding(ids[1]!);
          return begun !== undefined && Number(begun[1]) >= now() + 60 ? begun : undefined;
        };
        await until(async () => (await full()) !== undefined, 30_000, 'the second reserved to retry_after (90 s)');
        const begun = (await full())!;
        if (layout === 'zset') assert.equal(JSON.parse(begun[0].toString()).attempts, 1, "the pop's member, attempts + 1");
        stuck.proc.kill('SIGKILL');
        assert.equal(await stuck.exited, 'SIGKILL');

        const got: { id: string; attempts: number }[] = [];
        app.handle(URN, (_d, m) => void got.push({ id: m.id, attempts: m.attempts }));
        // The bound only ends a failing run (the read-ahead lease is a few seconds).
        await app.consume({ maxMessages: 8, idleMs: 25_000 });
        assert.deepEqual(got.map((g) => g.id).sort(), ids.slice(2).sort());
        assert.deepEqual(new Set(got.map((g) => g.attempts)), new Set([1]));

        assert.equal(await redis.zcard(reservedKey), 1, 'only the begun one is still reserved');
        await dueNow(redis, reservedKey);
        got.length = 0;
        await app.consume({ maxMessages: 1, idleMs: 25_000 });
        assert.deepEqual(got, [{ id: ids[1], attempts: layout === 'zset' ? 2 : 1 }]);
      } finally {
        stuck.proc.kill('SIGKILL');
        await app.close();
        await redis.quit();
      }
    });
  });
}
