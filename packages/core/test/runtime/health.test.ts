import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigurationError, createApp, InMemoryTransport, type App, type Transport } from '@babelqueue/core';
import { captureLogger } from '../../../../test/support/capture-logger.js';
import { until } from '../../../../test/support/until.js';

const URN = 'urn:babel:orders:created';

/** The probe server's port, from its start-up log line. */
async function probePort(logger: ReturnType<typeof captureLogger>): Promise<number> {
  await until(() => logger.lines.some((l) => l.message.startsWith('health probes on')), 10_000, 'the probe server');
  return logger.lines.find((l) => l.message.startsWith('health probes on'))!.fields.port as number;
}

async function probe(port: number, path: string): Promise<{ code: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * Memory, with a consume loop that takes nothing until `unblock()` (a worker
 * whose loop is wedged while messages wait: a fault no real broker produces on
 * demand) and a connection state the test sets.
 */
function wedgedTransport(memory: InMemoryTransport): Transport & { up: boolean; unblock(): void } {
  let unblock!: () => void;
  const unblocked = new Promise<void>((resolve) => (unblock = resolve));
  return {
    rules: memory.rules,
    capabilities: memory.capabilities,
    target: memory.target,
    up: true,
    unblock,
    get connected() {
      return this.up;
    },
    connect: () => Promise.resolve(),
    publish: (message) => memory.publish(message),
    readyCount: (queue) => memory.readyCount(queue),
    async consume(queue, onDelivery, options) {
      await Promise.race([unblocked, new Promise((resolve) => options.signal.addEventListener('abort', resolve))]);
      if (!options.signal.aborted) await memory.consume(queue, onDelivery, options);
    },
    close: () => Promise.resolve(),
  };
}

function started(app: App, options: Parameters<App['run']>[0] = {}) {
  const stop = new AbortController();
  const running = app.run({ ...options, signal: stop.signal });
  return { stop: async () => { stop.abort(); await running; }, running };
}

describe('app.health()', () => {
  test('before run: not live, not ready, not consuming; the memory transport reports connected', async () => {
    const app = createApp({ transport: new InMemoryTransport(), queue: 'orders', logger: captureLogger() });
    const health = await app.health();
    assert.deepEqual(
      { live: health.live, ready: health.ready, consuming: health.consuming, connected: health.connected, stalled: health.stalled, inFlight: health.inFlight },
      { live: false, ready: false, consuming: false, connected: true, stalled: false, inFlight: 0 },
    );
    assert.equal(health.lastDeliveryAt, null);
  });

  test('a run reports consuming, in-flight, the last delivery and settlement, and stops consuming on shutdown', async () => {
    const app = createApp({ transport: new InMemoryTransport(), queue: 'orders', logger: captureLogger() });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    app.handle(URN, () => held);
    const run = started(app, { concurrency: 2 });
    await until(async () => (await app.health()).consuming, 10_000, 'consuming');
    await app.publish(URN, { n: 1 });
    await until(async () => (await app.health()).inFlight === 1, 10_000, 'one in flight');
    const busy = await app.health();
    assert.ok(busy.lastDeliveryAt instanceof Date, 'lastDeliveryAt is a Date');
    assert.equal(busy.lastSettleAt, null);
    assert.deepEqual([busy.ready, busy.live, busy.concurrency, busy.queues], [true, true, 2, ['orders']]);
    release();
    await until(async () => (await app.health()).lastSettleAt !== null, 10_000, 'the settlement');
    assert.equal((await app.health()).inFlight, 0);
    await run.stop();
    const after = await app.health();
    assert.deepEqual([after.consuming, after.ready, after.live], [false, false, false]);
  });

  test('stalled: messages ready, a free slot and no delivery for stalledAfterMs; liveness fails, then recovers', async () => {
    const memory = new InMemoryTransport();
    const transport = wedgedTransport(memory);
    const logger = captureLogger();
    const app = createApp({ transport, queue: 'orders', logger });
    app.handle(URN, () => undefined);
    const run = started(app, { health: { port: 0, stalledAfterMs: 100 } });
    const port = await probePort(logger);
    await until(async () => (await app.health()).consuming, 10_000, 'consuming');
    assert.equal((await probe(port, '/healthz')).code, 200);
    await until(async () => !(await app.health()).stalled && (await probe(port, '/healthz')).code === 200, 10_000, 'idle with an empty queue is not stalled');
    await app.publish(URN, { n: 1 });
    await until(async () => (await probe(port, '/healthz')).code === 503, 10_000, 'liveness failing on the stall');
    const body = (await probe(port, '/healthz')).body;
    assert.deepEqual([body.status, body.stalled, body.ready], ['fail', true, true], 'stalled but still connected and consuming');
    transport.unblock();
    await until(async () => memory.messages('orders').length === 0, 10_000, 'the message consumed');
    await until(async () => (await probe(port, '/healthz')).code === 200, 10_000, 'liveness back');
    await run.stop();
  });

  test('readiness follows the connection the transport reports; liveness does not', async () => {
    const transport = wedgedTransport(new InMemoryTransport());
    transport.unblock();
    const logger = captureLogger();
    const app = createApp({ transport, queue: 'orders', logger });
    app.handle(URN, () => undefined);
    const run = started(app, { health: { port: 0 } });
    const port = await probePort(logger);
    await until(async () => (await probe(port, '/readyz')).code === 200, 10_000, 'ready');
    transport.up = false;
    const down = await probe(port, '/readyz');
    assert.deepEqual([down.code, down.body.status, down.body.connected, down.body.consuming], [503, 'fail', false, true]);
    assert.equal((await probe(port, '/healthz')).code, 200, 'a broker outage is not a dead worker');
    transport.up = true;
    assert.equal((await probe(port, '/readyz')).code, 200);
    assert.equal((await probe(port, '/nope')).code, 404);
    await run.stop();
    await assert.rejects(fetch(`http://127.0.0.1:${port}/readyz`), 'the server closes with the run');
  });

  test('a transport that reports no connection counts as connected while consuming, and is never stalled without readyCount', async () => {
    const memory = new InMemoryTransport();
    const bare: Transport = {
      rules: memory.rules, capabilities: memory.capabilities, target: memory.target,
      connect: () => Promise.resolve(),
      publish: (m) => memory.publish(m),
      consume: (_q, _on, options) => new Promise((resolve) => options.signal.addEventListener('abort', () => resolve())),
      close: () => Promise.resolve(),
    };
    const app = createApp({ transport: bare, queue: 'orders', logger: captureLogger() });
    app.handle(URN, () => undefined);
    assert.equal((await app.health()).connected, false);
    const run = started(app, { health: { stalledAfterMs: 1 } });
    await app.publish(URN, { n: 1 });
    await until(async () => (await app.health()).ready, 10_000, 'ready');
    await new Promise((resolve) => setTimeout(resolve, 20)); // past stalledAfterMs: only the missing count keeps it unstalled
    assert.equal((await app.health()).stalled, false);
    await run.stop();
  });

  test('bad health options fail the run at once', async () => {
    const app = createApp({ transport: new InMemoryTransport(), queue: 'orders', logger: captureLogger() });
    await assert.rejects(app.run({ health: { port: 70_000 } }), ConfigurationError);
    await assert.rejects(app.run({ health: { stalledAfterMs: 0 } }), ConfigurationError);
    await assert.rejects(app.run({ health: { prot: 1 } as never }), /did you mean "port"/);
  });
});
