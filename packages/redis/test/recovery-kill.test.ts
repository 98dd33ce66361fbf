import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createApp } from '@babelqueue/core';
import { RedisTransport } from '../src/index.js';
import { broker, captureLogger, inspector, uniqueQueue } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';
const child = join(import.meta.dirname, 'fixtures', 'stuck-consumer.ts');

/** How long the child may take to start and reach its handler on a busy machine. */
const START_TIMEOUT_MS = 60_000;

/** Starts the stuck consumer and resolves once its handler runs (or fails after the deadline). */
function startStuckConsumer(layout: string, queue: string, concurrency = 1) {
  const proc = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', child, b.url!, layout, queue, URN, String(concurrency)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const inHandler = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stuck consumer did not reach its handler in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    proc.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('in-handler')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stuck consumer exited early (${code})`));
    });
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
  return { proc, inHandler, exited };
}

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
  describe(`redis ${layout}: a consumer killed with SIGKILL holding a batch (read-ahead no handler saw)`, { skip: b.skip }, () => {
    it('loses nothing: every message of the batch is redelivered after retry_after, exactly once', async () => {
      const q = uniqueQueue(`${layout}-kill-batch`);
      const redis = inspector(b.url!);
      const logger = captureLogger();
      // The killed consumer (fixture) reserved with retry_after 1 s; this one reserves for 60 s, so
      // its own read-ahead never expires on a busy machine and comes back as a second delivery
      // (recovery reads the deadline each reservation carries, not this transport's setting).
      const transport = new RedisTransport({ url: b.url!, layout, retryAfter: 60, logger });
      const app = createApp({ transport, queue: q, logger });
      const reservedKey = layout === 'zset' ? `queues:${q}:reserved` : `${q}:processing:deadlines`;
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(await app.publish(URN, { order_id: i }));
      // Two slots, both stuck; the first reserve also took a read-ahead of min(3 × 2, floor((10 - 2) / 2)) = 4.
      const stuck = startStuckConsumer(layout, q, 2);
      try {
        await stuck.inHandler;
        const held = await redis.zcard(reservedKey);
        assert.equal(held, 6, `the killed consumer held 2 in its handlers and 4 read ahead, not ${held}`);
        stuck.proc.kill('SIGKILL');
        assert.equal(await stuck.exited, 'SIGKILL');

        const got: { id: string; attempts: number }[] = [];
        app.handle(URN, (_d, m) => void got.push({ id: m.id, attempts: m.attempts }));
        // The four never reserved come at once, the six held after retry_after (1 s); the bound only ends a failing run.
        await app.consume({ maxMessages: 10, idleMs: 30_000 });
        assert.deepEqual(got.map((g) => g.id).sort(), [...ids].sort(), 'each message exactly once');
        // Zset: a pop counts as an attempt (Laravel's rule), read-ahead included; legacy recovery counts none.
        const recovered = got.filter((g) => ids.indexOf(g.id) < 6);
        assert.deepEqual(recovered.map((g) => g.attempts), layout === 'zset' ? [2, 2, 2, 2, 2, 2] : [1, 1, 1, 1, 1, 1]);
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
