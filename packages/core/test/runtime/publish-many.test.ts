import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CapabilityError,
  ConfigurationError,
  createApp,
  InMemoryTransport,
  InvalidMessageError,
  PublishManyError,
  type OutgoingMessage,
  type PublishScope,
  type Transport,
} from '@babelqueue/core';
import { captureLogger } from '../../../../test/support/capture-logger.js';

const URN = 'urn:babel:orders:created';
const json = (body: Buffer) => JSON.parse(body.toString('utf8')) as Record<string, any>;

/** The in-memory transport with the bodies it was handed recorded, and optionally without `publishMany`. */
function spied(options: { batch?: boolean; beforeWrite?: (queue: string, body: Buffer) => void } = {}) {
  const memory = new InMemoryTransport(options.beforeWrite ? { beforeWrite: options.beforeWrite } : {});
  const sent: OutgoingMessage[] = [];
  const calls = { publish: 0, publishMany: 0 };
  const transport: Transport = Object.create(memory, {
    publish: { value: (m: OutgoingMessage) => { calls.publish += 1; sent.push(m); return memory.publish(m); } },
    publishMany: {
      value: options.batch === false ? undefined : (ms: readonly OutgoingMessage[]) => { calls.publishMany += 1; sent.push(...ms); return memory.publishMany(ms); },
    },
  });
  return { memory, transport, sent, calls };
}

describe('App.publishMany', () => {
  test('one envelope per item, each with its own meta.id, sent in one batch; ids resolve in order and the bytes arrive as sent', async () => {
    const { memory, transport, sent, calls } = spied();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    const ids = await app.publishMany(URN, [{ n: 0 }, { n: 1 }, { n: 2 }], { traceId: 'batch-trace', headers: { traceparent: 'tp' } });
    assert.deepEqual(calls, { publish: 0, publishMany: 1 });
    assert.equal(new Set(ids).size, 3, 'a fresh meta.id per item');
    const stored = memory.broker.ready('orders');
    assert.deepEqual(stored.map((m) => m.body), sent.map((m) => m.body), 'byte for byte, in order');
    stored.forEach((m, i) => {
      const envelope = json(m.body);
      assert.equal(envelope.meta.id, ids[i]);
      assert.equal(envelope.job, URN);
      assert.equal(envelope.trace_id, 'batch-trace');
      assert.deepEqual(envelope.data, { n: i });
      assert.equal(m.headers.traceparent, 'tp');
      assert.equal(m.headers['bq-message-id'], ids[i]);
    });
  });

  test('an item is the same message a single publish makes: same members, metadata names and riders', async () => {
    const { memory, transport } = spied();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    await app.publish(URN, { n: 1 }, { traceId: 't', headers: { traceparent: 'tp' }, key: 'k' });
    await app.publishMany(URN, [{ n: 1 }], { traceId: 't', headers: { traceparent: 'tp' }, key: 'k' });
    const [single, batched] = memory.broker.ready('orders');
    const strip = (body: Buffer) => {
      const e = json(body);
      return { ...e, meta: { ...e.meta, id: 'x', created_at: 0 } };
    };
    assert.deepEqual(strip(batched!.body), strip(single!.body));
    assert.deepEqual(Object.keys(batched!.headers).sort(), Object.keys(single!.headers).sort());
    assert.deepEqual(batched!.key, single!.key);
  });

  test('a transport without publishMany gets concurrent single publishes', async () => {
    const { memory, transport, calls } = spied({ batch: false });
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    const ids = await app.publishMany(URN, [{ n: 0 }, { n: 1 }]);
    assert.deepEqual(calls, { publish: 2, publishMany: 0 });
    assert.deepEqual(memory.broker.ready('orders').map((m) => json(m.body).meta.id), ids);
  });

  for (const batch of [true, false]) {
    test(`a partial failure rejects with a PublishManyError naming the failed items; the others are on the queue (${batch ? 'batch' : 'fallback'})`, async () => {
      const { memory, transport } = spied({
        batch,
        beforeWrite: (_queue, body) => {
          if (json(body).data.n === 1) throw new Error('refused by the broker');
        },
      });
      const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
      const error = await app.publishMany(URN, [{ n: 0 }, { n: 1 }, { n: 2 }]).then(
        () => assert.fail('must reject'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof PublishManyError, 'a PublishManyError');
      assert.deepEqual(error.failed, [1]);
      assert.deepEqual(error.results.map((r) => r.ok), [true, false, true]);
      assert.match(error.errors[0]!.message, /refused by the broker/);
      assert.match(error.message, /1 of 3 items failed \(items 1;/);
      const stored = memory.broker.ready('orders').map((m) => json(m.body).meta.id);
      assert.deepEqual(stored, [error.results[0]!.id, error.results[2]!.id]);
      assert.notEqual(error.results[1]!.id, undefined, 'the failed item still names its meta.id');
    });
  }

  test('a transport whose publishMany rejects as a whole fails every item', async () => {
    const memory = new InMemoryTransport();
    const transport: Transport = Object.create(memory, { publishMany: { value: async () => { throw new Error('connection closed'); } } });
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    const error = await app.publishMany(URN, [{ n: 0 }, { n: 1 }]).catch((e: unknown) => e);
    assert.ok(error instanceof PublishManyError, 'a PublishManyError');
    assert.deepEqual(error.failed, [0, 1]);
    assert.ok(error.errors.every((e) => /connection closed/.test(e.message)), 'each item carries the reason');
  });

  test('an item that cannot be an envelope fails the call before anything is sent, naming the item', async () => {
    const { memory, transport, calls } = spied();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    await assert.rejects(app.publishMany(URN, [{ n: 0 }, { n: 0 }, { n: Number.NaN }]), (e: unknown) => {
      assert.ok(e instanceof InvalidMessageError, 'the same error publish throws');
      assert.equal(e.pointer, '/data/n');
      assert.match(e.message, /\(item 2\)/);
      return true;
    });
    assert.deepEqual(calls, { publish: 0, publishMany: 0 });
    assert.equal(memory.broker.stats('orders').ready, 0);
  });

  test('options are checked as for publish: unknown keys, a bad delay, a delay the transport cannot carry, items that are not an array', async () => {
    const { transport } = spied();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    await assert.rejects(app.publishMany(URN, [{}], { queu: 'x' } as never), /publishMany options: unknown option "queu"/);
    await assert.rejects(app.publishMany(URN, [{}], { delayMs: -1 }), ConfigurationError);
    await assert.rejects(app.publishMany(URN, {} as never), /must be an array/);
    const noDelay: Transport = Object.create(new InMemoryTransport(), { capabilities: { value: { delayedPublish: false, delayedRetry: false, retry: true, headers: true } } });
    await assert.rejects(createApp({ transport: noDelay, logger: captureLogger() }).publishMany(URN, [{}], { delayMs: 5 }), CapabilityError);
  });

  test('delays apply to every item; an empty list sends nothing', async () => {
    const { memory, transport, calls } = spied();
    const app = createApp({ transport, queue: 'orders', logger: captureLogger() });
    assert.deepEqual(await app.publishMany(URN, []), []);
    assert.deepEqual(calls, { publish: 0, publishMany: 0 });
    await app.publishMany(URN, [{ n: 0 }, { n: 1 }], { delayMs: 60_000 });
    assert.deepEqual(memory.broker.stats('orders'), { ready: 0, delayed: 2, inFlight: 0 });
  });

  test('instrumentation: one scope per item, each ended with its own outcome', async () => {
    const ended: { id?: string; error?: unknown }[] = [];
    const memory = new InMemoryTransport({ beforeWrite: (_q, body) => { if (json(body).data.n === 1) throw new Error('no'); } });
    const app = createApp({
      transport: memory,
      queue: 'orders',
      logger: captureLogger(),
      instrumentation: {
        publish: (): PublishScope => ({ headers: { traceparent: 'span' }, end: (r) => void ended.push({ ...(r.envelope ? { id: r.envelope.meta.id } : {}), ...(r.error !== undefined ? { error: r.error } : {}) }) }),
      },
    });
    const error = await app.publishMany(URN, [{ n: 0 }, { n: 1 }]).catch((e: unknown) => e) as PublishManyError;
    assert.equal(ended.length, 2);
    assert.deepEqual(ended.map((e) => e.id), error.results.map((r) => r.id));
    assert.deepEqual(ended.map((e) => e.error !== undefined), [false, true]);
    assert.equal(memory.broker.ready('orders')[0]!.headers.traceparent, 'span');
  });
});
