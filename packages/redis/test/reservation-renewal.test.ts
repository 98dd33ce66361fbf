// A handler that outlives retry_after keeps its reservation: the deadline is
// pushed out while it runs (legacy: the :processing:deadlines member; zset: the
// :reserved member), so a second consumer never gets a message that is still
// being handled. Without renewal, recovery would hand it over within 4 s.
// The lease is 4 s, renewed about every second: a busy machine has about three
// seconds of timer delay before a live lease could lapse (with 2 s it had about
// one, which a loaded 2-core run can reach).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigurationError, createApp } from '@babelqueue/core';
import type { Redis } from 'ioredis';
import { RedisTransport } from '../src/index.js';
import { broker, captureLogger, inspector, uniqueQueue, withScores } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:slow';

for (const layout of ['legacy', 'zset'] as const) {
  describe(`redis ${layout}: reservations are renewed while a handler runs`, { skip: b.skip }, () => {
    let redis: Redis;
    before(() => {
      redis = inspector(b.url!);
    });
    after(async () => {
      await redis.quit();
    });

    const deadlines = (q: string) => (layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`);

    it('two consumers, retryAfter 4 s, a 5.5 s handler: it runs once and its deadline moves while it runs', async () => {
      const queue = uniqueQueue(`renew-${layout}`);
      const consumers = [0, 1].map(() => {
        const logger = captureLogger();
        const transport = new RedisTransport({ url: b.url!, layout, retryAfter: 4, logger });
        return { transport, logger, app: createApp({ transport, queue, logger }) };
      });
      let runs = 0;
      let release!: () => void;
      const finished = new Promise<void>((resolve) => (release = resolve));
      const scores: number[] = [];
      for (const { app } of consumers) {
        app.handle(URN, async () => {
          runs += 1;
          // Watch the deadline while the handler is alive, then finish.
          for (let i = 0; i < 11; i++) {
            await new Promise((r) => setTimeout(r, 500));
            const [entry] = await withScores(redis, deadlines(queue));
            if (entry) scores.push(Number(entry[1]));
          }
          release();
        });
      }
      await consumers[0]!.app.publish(URN, {});
      const stop = new AbortController();
      const running = consumers.map(({ app }) => app.run({ signal: stop.signal, concurrency: 1 }));
      try {
        await finished;
        // Both consumers keep reserving for another recovery period: a lapsed lease would show up as a second run.
        await new Promise((r) => setTimeout(r, 2500));
      } finally {
        stop.abort();
        await Promise.all(running);
      }
      assert.equal(runs, 1, 'handled once: never recovered while the handler was alive');
      assert.ok(scores.length >= 9, `deadline sampled ${scores.length} times`);
      assert.ok(scores.at(-1)! > scores[0]!, `the deadline moved forward (${scores.join(', ')})`);
      assert.equal(await redis.zcard(deadlines(queue)), 0, 'the reservation ended with the ack');
    });

    it('a handler timeout not below retryAfter is refused before consuming', async () => {
      const transport = new RedisTransport({ url: b.url!, layout, retryAfter: 2, logger: captureLogger() });
      const app = createApp({ transport, queue: uniqueQueue('renew-timeout'), handlerTimeoutMs: 2000, logger: captureLogger() });
      app.handle(URN, () => undefined);
      try {
        await assert.rejects(app.run(), (e: Error) =>
          e instanceof ConfigurationError && /below the redis-(legacy|zset) reservation of 2000 ms/.test(e.message));
      } finally {
        await transport.close();
      }
    });
  });
}
