// Connection loss without restarting the shared lab Pulsar (other suites use
// it, and a start takes about 50 s): a TCP proxy in front of the web service
// cuts every WebSocket and refuses new ones for a while, as a broker restart
// would, then lets them through again. A real restart is the reliability
// suite's business.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { createApp, drainQueue, silentLogger } from '@babelqueue/core';
import { PulsarTransport, PulsarUnavailableError } from '@babelqueue/pulsar';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { until } from '../../../test/support/until.js';
import { captureLogger, envelope, lab, RawPulsar, sleep, uniqueQueue } from './support/pulsar.js';

const URN = 'urn:babel:orders:created';
const WAIT_MS = 30_000;

describe('Pulsar connection loss (through a cuttable proxy)', { skip: lab.skip }, () => {
  const url = lab.url!;
  const raw = new RawPulsar(url);
  const created: string[] = [];
  after(() => raw.cleanup(created));

  const web = new URL(url);
  const proxyOf = () => new CuttableProxy({ host: web.hostname, port: Number(web.port || 8080) });

  it('the broker goes away mid-stream and refuses reconnects for a while: the consumer resumes and nothing is lost', async () => {
    const q = uniqueQueue('bq-pulsar-cut');
    created.push(q);
    const total = 60;
    const producer = new PulsarTransport({ url, logger: silentLogger });
    const ids = new Set<string>();
    for (let i = 0; i < total; i++) {
      const { body, projection } = envelope(URN, { i }, q);
      ids.add(projection.messageId);
      await producer.publish({ body, queue: q, projection });
    }
    await producer.close();

    const proxy = proxyOf();
    await proxy.start();
    const logger = captureLogger();
    const transport = new PulsarTransport({
      url: `http://127.0.0.1:${proxy.port}`,
      reconnect: { initialDelayMs: 50, maxDelayMs: 300 },
      negativeAckRedeliveryDelayMs: 100,
      logger,
    });
    const app = createApp({ transport, queue: q, logger });
    const handled = new Set<string>();
    let cut = false;
    let release!: () => void;
    const afterCut = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    app.handle(URN, async (_data, message) => {
      // Two handlers run across the outage: they settle after the reconnect,
      // on the new socket.
      if (!cut && handled.size >= 20 && held < 2) {
        held += 1;
        await afterCut;
      }
      await sleep(2);
      handled.add(message.id);
    });
    const stop = new AbortController();
    const running = app.run({ concurrency: 4, signal: stop.signal });
    try {
      await until(() => handled.size >= 20 && held === 2, WAIT_MS, '20 handled and 2 held');
      await proxy.down();
      cut = true;
      await until(() => /consumer WebSocket lost; reconnecting/.test(logger.text()), WAIT_MS, 'the loss noticed');
      await until(() => logger.lines.filter((l) => /cannot open the Pulsar consumer WebSocket/.test(l.message)).length >= 2, WAIT_MS, 'two refused reconnects');
      await proxy.start();
      release();
      await until(() => handled.size === total, WAIT_MS, `all ${total} handled`);
      await until(async () => (await raw.backlog(q)) === 0, WAIT_MS, 'the backlog acknowledged');
    } finally {
      release();
      stop.abort();
      await running;
      await proxy.down();
    }
    assert.deepEqual([...handled].sort(), [...ids].sort());
    assert.match(logger.text(), /Pulsar consumer WebSocket reconnected/);
  });

  it('a publish while the broker is away rejects at once with PulsarUnavailableError; after it is back, publishing works', async () => {
    const q = uniqueQueue('bq-pulsar-pub-cut');
    created.push(q);
    const proxy = proxyOf();
    await proxy.start();
    const transport = new PulsarTransport({ url: `http://127.0.0.1:${proxy.port}`, logger: silentLogger });
    const app = createApp({ transport, queue: q, logger: silentLogger });
    try {
      await app.publish(URN, { n: 1 });
      await proxy.down();
      await assert.rejects(app.publish(URN, { n: 2 }), (error: Error) => {
        assert.ok(error instanceof PulsarUnavailableError || error.name === 'PublishNotConfirmedError', `${error.name}: ${error.message}`);
        return true;
      });
      await proxy.start();
      await app.publish(URN, { n: 3 });
    } finally {
      await app.close();
      await proxy.down();
    }
    const got = await raw.take(q, 2);
    assert.deepEqual(got.map((m) => JSON.parse(m.body.toString('utf8')).data.n), [1, 3]);
  });

  it('the idle clock starts once the consumer is subscribed, so a slow connect does not eat a drain\'s idle budget', async () => {
    const IDLE_MS = 300;
    const q = uniqueQueue('bq-pulsar-idle-connect');
    created.push(q);
    const proxy = proxyOf();
    await proxy.start();
    await proxy.down();
    const logger = captureLogger();
    const transport = new PulsarTransport({ url: `http://127.0.0.1:${proxy.port}`, reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, logger });
    let ended = false;
    const draining = drainQueue(transport, q, { max: 1, idleMs: IDLE_MS }, async (taken) => taken.length).finally(() => (ended = true));
    try {
      await until(() => /cannot open the Pulsar consumer WebSocket/.test(logger.text()), WAIT_MS, 'a failed connect');
      // The broker stays away for twice the idle budget: the drain must still be waiting to start.
      await sleep(2 * IDLE_MS);
      assert.equal(ended, false, 'the idle clock ran before the consumer was subscribed');
      await proxy.start();
      assert.equal(await draining, 0, 'idle once subscribed, nothing taken');
      assert.ok(await raw.hasSubscription(q), 'the consumer reached the broker (it subscribed) before it went idle');
    } finally {
      // Closing first ends a loop still waiting for the broker, so a failure never hangs the file.
      await transport.close();
      await draining.catch(() => undefined);
      await proxy.down();
    }
  });

  it('close() does not wait for a WebSocket handshake that never ends (a black-holed broker)', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket)); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const transport = new PulsarTransport({ url: `http://127.0.0.1:${(silent.address() as { port: number }).port}`, logger: silentLogger });
    try {
      const consuming = transport.consume(uniqueQueue('bq-pulsar-blackhole'), async () => undefined, { concurrency: 1, signal: new AbortController().signal });
      await until(() => sockets.size > 0, WAIT_MS, 'the handshake under way');
      const closed = transport.close().then(() => 'closed');
      const verdict = await Promise.race([closed, sleep(10_000).then(() => 'still waiting')]);
      assert.equal(verdict, 'closed', 'close() returned while the handshake still hung');
      await consuming;
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});
