import assert from 'node:assert/strict';
import { createApp, type Transport } from '@babelqueue/core';
import type { CuttableProxy } from './cuttable-proxy.js';
import type { captureLogger } from './capture-logger.js';
import { until } from './until.js';

const URN = 'urn:babel:orders:created';
const WAIT_MS = 30_000;

async function probe(port: number, path: string): Promise<{ code: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * Runs a worker on `transport` (which reaches its broker through `proxy`) with
 * the probe server on, and checks: ready while connected; once the proxy
 * stops listening, `/readyz` fails with connected false while `/healthz`
 * stays up; once it listens again, ready again and a message published then is
 * handled. Every wait polls with a deadline. The worker has stopped when it
 * returns; the proxy is left listening, for the caller to close what it
 * opened through it (a Service Bus client) before taking it down.
 */
export async function readinessAcrossOutage(transport: Transport, proxy: CuttableProxy, queue: string, logger: ReturnType<typeof captureLogger>, waitMs = WAIT_MS): Promise<void> {
  const app = createApp({ transport, queue, logger });
  const got: number[] = [];
  app.handle(URN, (data: { n: number }) => void got.push(data.n));
  const stop = new AbortController();
  const running = app.run({ signal: stop.signal, health: { port: 0 } });
  try {
    await until(() => logger.lines.some((l) => l.message.startsWith('health probes on')), waitMs, 'the probe server');
    const port = logger.lines.find((l) => l.message.startsWith('health probes on'))!.fields.port as number;
    await until(async () => (await probe(port, '/readyz')).code === 200, waitMs, 'ready');
    await app.publish(URN, { n: 1 });
    await until(() => got.includes(1), waitMs, 'the first message');

    await proxy.down();
    await until(async () => (await probe(port, '/readyz')).code === 503, waitMs, 'readiness failing');
    const down = await probe(port, '/readyz');
    assert.deepEqual([down.body.status, down.body.connected, down.body.consuming], ['fail', false, true]);
    assert.equal((await probe(port, '/healthz')).code, 200, 'an unreachable broker is not a dead worker');

    await proxy.start();
    await until(async () => (await probe(port, '/readyz')).code === 200, waitMs, 'readiness back');
    await app.publish(URN, { n: 2 });
    // At-least-once: the first message may come again (its ack may have been lost in the cut).
    await until(() => got.includes(2), waitMs, 'the message published after the recovery');
    await until(async () => (await app.health()).inFlight === 0, waitMs, 'the second settlement');
    const health = await app.health();
    assert.deepEqual([health.ready, health.live], [true, true]);
    assert.ok(health.lastSettleAt instanceof Date, 'lastSettleAt is a Date');
  } catch (error) {
    // The worker's log says what the transport did meanwhile (reconnects, re-attaches); bodies are never logged.
    (error as Error).message += `\n--- worker log ---\n${logger.text()}`;
    throw error;
  } finally {
    stop.abort();
    await running;
  }
}
