import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp, PublishManyError } from '@babelqueue/core';
import type { Redis } from 'ioredis';
import { RedisTransport, type RedisLayout } from '../src/index.js';
import { outgoingBatch, retarget } from '../../../test/support/outgoing.js';
import { broker, captureLogger, inspector, uniqueQueue, withScores } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const ready = (layout: RedisLayout, q: string) => (layout === 'zset' ? `queues:${q}` : q);

for (const layout of ['legacy', 'zset'] as const) {
  describe(`redis ${layout} publishMany`, { skip: b.skip }, () => {
    let redis: Redis;
    let transport: RedisTransport;
    before(() => {
      redis = inspector(b.url!);
      transport = new RedisTransport({ url: b.url!, layout, logger: captureLogger() });
    });
    after(async () => {
      await transport.close();
      await redis.quit();
    });

    it('writes every message byte for byte as a single publish writes it, in order, with riders', async () => {
      const single = uniqueQueue('pm-single');
      const batched = uniqueQueue('pm-batch');
      const messages = outgoingBatch(single, 25, { headers: { traceparent: TRACEPARENT } });
      for (const m of messages) await transport.publish(m);
      const outcomes = await transport.publishMany(retarget(messages, batched));
      assert.deepEqual(outcomes, messages.map((m) => ({ ok: true, messageId: m.projection.messageId })));
      const a = await redis.lrangeBuffer(ready(layout, single), 0, -1);
      const c = await redis.lrangeBuffer(ready(layout, batched), 0, -1);
      assert.equal(c.length, 25);
      assert.deepEqual(c, a, 'the same bytes in the same order');
      if (layout === 'zset') assert.equal(await redis.llen(`queues:${batched}:notify`), 25, 'one wake-up token per message');
    });

    it('a batch larger than one write chunk (2,500) keeps every message, in order', async () => {
      const q = uniqueQueue('pm-large');
      const messages = outgoingBatch(q, 2500);
      const outcomes = await transport.publishMany(messages);
      assert.ok(outcomes.every((o) => o.ok), 'all accepted');
      const written = await redis.lrangeBuffer(ready(layout, q), 0, -1);
      assert.deepEqual(written, messages.map((m) => m.body), 'every body, byte for byte, in the order given');
      if (layout === 'zset') assert.equal(await redis.llen(`queues:${q}:notify`), 2500, 'one wake-up token per message');
    });

    if (layout === 'zset') {
      it('delayed messages go to :delayed with the score a single publish gives them', async () => {
        const single = uniqueQueue('pm-dsingle');
        const batched = uniqueQueue('pm-dbatch');
        const messages = outgoingBatch(single, 3, { delayMs: 60_000 });
        for (const m of messages) await transport.publish(m);
        const outcomes = await transport.publishMany([...retarget(messages, batched), ...outgoingBatch(batched, 1)]);
        assert.ok(outcomes.every((o) => o.ok), 'all accepted');
        const a = await withScores(redis, `queues:${single}:delayed`);
        const c = await withScores(redis, `queues:${batched}:delayed`);
        assert.deepEqual(c.map(([m]) => m).sort(Buffer.compare), a.map(([m]) => m).sort(Buffer.compare));
        c.forEach(([, score], i) => assert.ok(Math.abs(Number(score) - Number(a[i]![1])) <= 1, 'same due second (±1 for a tick between)'));
        assert.equal(await redis.llen(`queues:${batched}`), 1, 'the undelayed one is ready');
      });
    } else {
      it('a delayed message is refused alone; the others are written', async () => {
        const q = uniqueQueue('pm-ldelay');
        const [now, later] = outgoingBatch(q, 2);
        const outcomes = await transport.publishMany([now!, { ...later!, delayMs: 1000 }]);
        assert.equal(outcomes[0]!.ok, true);
        assert.equal(outcomes[1]!.ok, false);
        assert.match(String(!outcomes[1]!.ok && outcomes[1]!.error.message), /no delayed set/);
        assert.equal(await redis.llen(q), 1);
      });
    }

    it('a partial failure is reported per queue: a queue whose key holds another type fails, the other is written', async () => {
      const good = uniqueQueue('pm-good');
      const bad = uniqueQueue('pm-bad');
      await redis.set(ready(layout, bad), 'not a list');
      const messages = [...outgoingBatch(good, 2), ...outgoingBatch(bad, 2)];
      const outcomes = await transport.publishMany([messages[0]!, messages[2]!, messages[1]!, messages[3]!]);
      assert.deepEqual(outcomes.map((o) => o.ok), [true, false, true, false]);
      assert.match(String(!outcomes[1]!.ok && outcomes[1]!.error.message), /WRONGTYPE/);
      assert.equal(await redis.llen(ready(layout, good)), 2);
    });

    it('through the App: every item handled once; a closed connection fails every item with a PublishManyError', async () => {
      const q = uniqueQueue('pm-app');
      const logger = captureLogger();
      const t = new RedisTransport({ url: b.url!, layout, logger });
      const app = createApp({ transport: t, queue: q, logger });
      try {
        const seen: number[] = [];
        app.handle<{ n: number }>(URN, (data) => void seen.push(data.n));
        const ids = await app.publishMany(URN, Array.from({ length: 20 }, (_, n) => ({ n })));
        assert.equal(ids.length, 20);
        assert.equal(await app.consume({ maxMessages: 20, idleMs: 30_000 }), 20);
        assert.deepEqual(seen, Array.from({ length: 20 }, (_, n) => n));
      } finally {
        await app.close();
      }
      const error = await app.publishMany(URN, [{ n: 1 }, { n: 2 }]).catch((e: unknown) => e);
      assert.ok(error instanceof PublishManyError, 'a PublishManyError');
      assert.deepEqual(error.failed, [0, 1]);
    });
  });
}
