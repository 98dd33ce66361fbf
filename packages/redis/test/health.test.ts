import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '@babelqueue/core';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { until } from '../../../test/support/until.js';
import { broker, captureLogger, closeTransports, transport, uniqueQueue } from './support/redis.js';

const b = broker('redis');
const URN = 'urn:babel:orders:created';
const WAIT_MS = 30_000;

async function probe(port: number, path: string): Promise<{ code: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('redis: health probes across a lost connection', { skip: b.skip }, () => {
  afterEach(closeTransports);

  for (const layout of ['zset', 'legacy'] as const) {
    it(`${layout}: /readyz fails while the broker is unreachable and recovers with it; /healthz stays up; nothing is lost`, async () => {
      const url = new URL(b.url!);
      // The proxy stops listening on demand: every connection of the App is cut and none comes back until it listens again.
      const proxy = new CuttableProxy({ host: url.hostname, port: Number(url.port || 6379) });
      await proxy.start();
      const q = uniqueQueue(`${layout}-health`);
      const { t } = transport(proxy.url(b.url!), { layout });
      const logger = captureLogger();
      const app = createApp({ transport: t, queue: q, logger });
      const got: number[] = [];
      app.handle(URN, (data: { n: number }) => void got.push(data.n));
      const stop = new AbortController();
      const running = app.run({ signal: stop.signal, health: { port: 0 } });
      try {
        await until(() => logger.lines.some((l) => l.message.startsWith('health probes on')), WAIT_MS, 'the probe server');
        const port = logger.lines.find((l) => l.message.startsWith('health probes on'))!.fields.port as number;
        await until(async () => (await probe(port, '/readyz')).code === 200, WAIT_MS, 'ready');
        await app.publish(URN, { n: 1 });
        await until(() => got.length === 1, WAIT_MS, 'the first message');

        await proxy.down();
        await until(async () => (await probe(port, '/readyz')).code === 503, WAIT_MS, 'readiness failing');
        const down = await probe(port, '/readyz');
        assert.deepEqual([down.body.status, down.body.connected, down.body.consuming], ['fail', false, true]);
        assert.equal((await probe(port, '/healthz')).code, 200, 'an unreachable broker is not a dead worker');
        assert.equal(app.transport.connected, false);

        await proxy.start();
        await until(async () => (await probe(port, '/readyz')).code === 200, WAIT_MS, 'readiness back');
        await app.publish(URN, { n: 2 });
        await until(() => got.length === 2, WAIT_MS, 'the message published after the recovery');
        await until(async () => (await app.health()).inFlight === 0, WAIT_MS, 'the second settlement');
        const health = await app.health();
        assert.deepEqual([health.ready, health.live], [true, true]);
        assert.ok(health.lastSettleAt instanceof Date, 'lastSettleAt is a Date');
      } finally {
        stop.abort();
        await running;
        await proxy.down();
      }
    });
  }
});
