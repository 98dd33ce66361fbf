// A worker (`run`, a consume without drain limits) receives through the SDK's
// streaming receiver (src/stream-loop.ts): its limits and its stop against the
// Service Bus stand-in (or a real namespace), read back with the official
// client; which receive errors end it, with a fake receiver (the stand-in
// accepts any credential and creates any queue on first use).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServiceBusError, type ProcessErrorArgs, type ServiceBusReceiver, type MessageHandlers } from '@azure/service-bus';
import { createApp } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { streamLoop } from '../src/stream-loop.js';
import { asb, captureLogger, configureQueue, Raw, uniqueQueue } from './support/lab.js';
import { until } from '../../../test/support/until.js';

const URN = 'urn:babel:orders:created';

describe('Azure Service Bus worker on the streaming receiver', { skip: asb.skip }, () => {
  const url = asb.url!;
  let raw: Raw;
  before(() => {
    raw = new Raw(url);
  });
  after(async () => {
    await raw.close();
  });

  async function worker(prefix: string) {
    const queue = uniqueQueue(`bq-asb-${prefix}`);
    await configureQueue(url, queue);
    const logger = captureLogger();
    const app = createApp({ transport: new AzureServiceBusTransport({ connectionString: url, logger }), queue, logger });
    return { app, queue, logger };
  }

  it('holds at most `concurrency` messages at once and handles every one once', async () => {
    const { app } = await worker('stream-concurrency');
    const N = 8;
    const handled: number[] = [];
    let inFlight = 0;
    let most = 0;
    app.handle(URN, async (data: { i: number }) => {
      most = Math.max(most, ++inFlight);
      // Held until the slots are full (or too few are left to fill them): a fourth at once would show.
      await until(() => inFlight === 3 || handled.length + inFlight === N, 10_000).catch(() => undefined);
      handled.push(data.i);
      inFlight--;
    });
    for (let i = 0; i < N; i++) await app.publish(URN, { i });
    const stop = new AbortController();
    const running = app.run({ signal: stop.signal, concurrency: 3 });
    try {
      await until(() => handled.length === N, 30_000, `all ${N} handled (have ${handled.length})`);
      assert.equal(most, 3, 'never more than `concurrency` in flight');
      assert.deepEqual([...handled].sort((a, b) => a - b), [...Array(N).keys()]);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('stop: the deliveries in flight settle before the receiver closes; the rest stay on the queue, never locked', async () => {
    const { app, queue } = await worker('stream-stop');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const taken: number[] = [];
    app.handle(URN, async (data: { i: number }) => {
      taken.push(data.i);
      await released;
    });
    for (let i = 0; i < 5; i++) await app.publish(URN, { i });
    const stop = new AbortController();
    const running = app.run({ signal: stop.signal, concurrency: 2 });
    await until(() => taken.length === 2, 30_000, 'two deliveries in flight');
    stop.abort();
    release();
    await running;
    const left = await raw.drain(queue);
    assert.equal(taken.length, 2, 'nothing handed over after the stop');
    assert.deepEqual(left.map((m) => (JSON.parse(String(m.body)) as { data: { i: number } }).data.i).sort(), [0, 1, 2, 3, 4].filter((i) => !taken.includes(i)));
    assert.deepEqual(left.map((m) => m.deliveryCount), [0, 0, 0], 'the rest were never locked');
  });
});

/** A receiver whose subscription reports `errors`, and whose peeks fail `failedPeeks` times. */
function fakeReceiver(failedPeeks = 0) {
  const fake = {
    handlers: undefined as MessageHandlers | undefined,
    peeks: 0,
    closed: false,
    subscriptionClosed: false,
    subscribe(handlers: MessageHandlers) {
      fake.handlers = handlers;
      return { close: async () => void (fake.subscriptionClosed = true) };
    },
    peekMessages: async () => {
      if (fake.peeks++ < failedPeeks) throw new ServiceBusError('still down', 'ServiceCommunicationProblem');
      return [];
    },
    close: async () => void (fake.closed = true),
    report: (error: Error) => fake.handlers!.processError({ error, errorSource: 'receive', entityPath: 'orders', fullyQualifiedNamespace: 'ns', identifier: 'r' } as ProcessErrorArgs),
  };
  return fake;
}

function stream(fake: ReturnType<typeof fakeReceiver>, stop = new AbortController()) {
  const logger = captureLogger();
  const reached: boolean[] = [];
  const done = streamLoop({
    openReceiver: () => fake as unknown as ServiceBusReceiver,
    toDelivery: () => assert.fail('no message is received'),
    queue: 'orders',
    logger,
    receiveWaitMs: 10,
    reached: (ok) => void reached.push(ok),
  }, async () => undefined, { concurrency: 4, signal: stop.signal });
  return { logger, reached, done, stop };
}

describe('Service Bus streaming receive errors', () => {
  for (const code of ['UnauthorizedAccess', 'MessagingEntityNotFound', 'MessagingEntityDisabled']) {
    it(`ends the worker with the SDK's error on a fatal receive error (${code}), the receiver closed`, async () => {
      const fake = fakeReceiver();
      const { done } = stream(fake);
      await fake.report(new ServiceBusError(`refused (${code})`, code as ServiceBusError['code']));
      await assert.rejects(done, (error: unknown) => error instanceof ServiceBusError && error.code === code);
      assert.ok(fake.subscriptionClosed && fake.closed, 'subscription and receiver closed');
    });
  }

  it('a transient receive error is logged at WARN and the namespace is unreached until a peek answers', async () => {
    const fake = fakeReceiver(2);
    const { logger, reached, done, stop } = stream(fake);
    await fake.report(new ServiceBusError('ECONNRESET', 'GeneralError'));
    await until(() => reached.at(-1) === true, 10_000, 'reached again once a peek answered');
    assert.deepEqual(reached, [false, true]);
    assert.equal(fake.peeks, 3, 'peeked until it answered');
    const warns = logger.lines.filter((line) => line.level === 'warn');
    assert.equal(warns.length, 1, logger.text());
    assert.match(String(warns[0]!.fields.error), /ECONNRESET/);
    stop.abort();
    await done;
    assert.ok(fake.closed, 'the receiver closed on stop');
  });
});
