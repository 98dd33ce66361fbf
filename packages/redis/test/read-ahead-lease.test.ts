// The read-ahead lease: a delivery reserved ahead of a free slot is scored a
// few seconds out and renewed while its consumer holds it; its full
// reservation is written as its handler begins. The crash side (SIGKILL) is in
// recovery-kill.test.ts; here, a live consumer whose lease lapsed anyway.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createApp } from '@babelqueue/core';
import { RedisTransport } from '../src/index.js';
import { until } from '../../../test/support/until.js';
import { broker, captureLogger, closeTransports, inspector, now, track, uniqueQueue, withScores } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';

afterEach(closeTransports);

for (const layout of ['legacy', 'zset'] as const) {
  describe(`redis ${layout}: read-ahead lease`, { skip: b.skip }, () => {
    it('read-ahead is scored by the lease (seconds), a slot by retry_after', async () => {
      const q = uniqueQueue(`${layout}-lease`);
      const redis = track(inspector(b.url!));
      const logger = captureLogger();
      const app = createApp({ transport: track(new RedisTransport({ url: b.url!, layout, retryAfter: 60, logger })), queue: q, logger });
      const reservedKey = layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`;
      for (let i = 0; i < 10; i++) await app.publish(URN, { order_id: i });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let started = 0;
      app.handle(URN, async () => {
        started += 1;
        await released;
      });
      const consuming = app.consume({ concurrency: 1, maxMessages: 10, idleMs: 20_000 });
      try {
        await until(() => started === 1, 20_000, 'the first handler');
        // One slot and a read-ahead of min(3, floor((10 - 1) / 2)) = 3.
        await until(async () => (await redis.zcard(reservedKey)) === 4, 20_000, 'four reserved');
        const scores = (await withScores(redis, reservedKey)).map(([, s]) => Number(s) - now()).sort((x, y) => x - y);
        assert.ok(scores.slice(0, 3).every((s) => s <= 5), `read-ahead within the 5 s lease: ${scores.join(', ')}`);
        assert.ok(scores[3]! >= 55, `the slot's reservation runs to retry_after: ${scores.join(', ')}`);
        if (layout === 'zset') {
          // Held as the raw job (attempts 0): a migrate returns it uncounted.
          const attempts = (await withScores(redis, reservedKey)).map(([m]) => JSON.parse(m.toString()).attempts).sort();
          assert.deepEqual(attempts, [0, 0, 0, 1]);
        }
      } finally {
        release();
        await consuming;
      }
    });

    it('a lease that lapsed while the consumer held it (taken back by a sweep) is dropped, not handed over: each message once', async () => {
      const q = uniqueQueue(`${layout}-lease-lost`);
      const redis = track(inspector(b.url!));
      const logger = captureLogger();
      const app = createApp({ transport: track(new RedisTransport({ url: b.url!, layout, retryAfter: 60, logger })), queue: q, logger });
      const reservedKey = layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`;
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(await app.publish(URN, { order_id: i }));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const got: string[] = [];
      app.handle(URN, async (_d, m) => {
        got.push(m.id);
        await released;
      });
      const consuming = app.consume({ concurrency: 1, maxMessages: 10, idleMs: 20_000 });
      try {
        await until(() => got.length === 1, 20_000, 'the first handler');
        await until(async () => (await redis.zcard(reservedKey)) === 4, 20_000, 'four reserved');
        // What another consumer's sweep / migrate does once a lease has lapsed: the read-ahead
        // (scored by the lease, not retry_after) goes back to the ready list and its member goes.
        for (const [member, score] of await withScores(redis, reservedKey)) {
          if (Number(score) > now() + 30) continue;
          if (layout === 'zset') {
            await redis.multi().zrem(reservedKey, member).rpush(`queues:${q}`, member).rpush(`queues:${q}:notify`, 1).exec();
          } else {
            const raw = member.subarray(33);
            await redis.multi().zrem(reservedKey, member).lrem(`${q}:processing`, 1, raw).rpush(q, raw).exec();
          }
        }
        await until(() => logger.lines.some((l) => l.message.startsWith('read-ahead leases lapsed')), 20_000, 'the lapse noticed');
      } finally {
        release();
        await consuming;
      }
      assert.deepEqual([...got].sort(), [...ids].sort(), 'each message exactly once');
      assert.ok(!logger.text().includes('reservation expired'), logger.text());
      assert.ok(!logger.text().includes('lapsed before its handler began'), logger.text());
      assert.equal(await redis.exists(reservedKey), 0);
    });
  });
}

describe('redis legacy: a handler that blocks the event loop', { skip: b.skip }, () => {
  it('once one blocked, the full reservation is written before the next handler runs: a sweep elsewhere during a 7 s block never takes the running one', async () => {
    const q = uniqueQueue('legacy-lease-block');
    const logger = captureLogger();
    const app = createApp({ transport: track(new RedisTransport({ url: b.url!, retryAfter: 60, logger })), queue: q, logger });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await app.publish(URN, { order_id: i }));
    // Another consumer's sweep, in its own process: this one's event loop is about to stop.
    const sweeper = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join(import.meta.dirname, 'fixtures', 'sweeper.ts'), b.url!, q], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    sweeper.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const got: string[] = [];
    const block = (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end);
    };
    app.handle(URN, (_d, m) => {
      got.push(m.id);
      // The first blocks briefly (the loop notices); the second, read ahead, past its lease.
      if (got.length === 1) block(300);
      if (got.length === 2) block(7000);
    });
    try {
      await until(() => out.includes('sweeping'), 60_000, 'the sweeper');
      await app.consume({ concurrency: 1, maxMessages: 6, idleMs: 10_000 });
    } finally {
      sweeper.kill('SIGKILL');
    }
    assert.ok(logger.lines.some((l) => l.message.startsWith('a handler blocked the event loop')), logger.text());
    // The sweep takes back the read-ahead whose leases lapsed during the block (the loop drops
    // those and reserves them again), never the one whose handler was running.
    assert.deepEqual([...got].sort(), [...ids].sort(), `each message exactly once (sweeper: ${out})`);
    assert.ok(!logger.text().includes('reservation expired'), logger.text());
    assert.ok(!logger.text().includes('lapsed before its handler began'), logger.text());
  });
});
