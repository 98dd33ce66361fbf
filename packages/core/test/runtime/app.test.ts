import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CapabilityError,
  ConfigurationError,
  createApp,
  InMemoryTransport,
  MemoryBroker,
  type Message,
} from '@babelqueue/core';
import { captureLogger } from '../../../../test/support/capture-logger.js';

const URN = 'urn:babel:orders:created';
const SECRET = 'card-4242-4242'; // appears only in bodies; must never reach a log line

function setup(options: Partial<Parameters<typeof createApp>[0]> = {}) {
  const transport = (options.transport as InMemoryTransport | undefined) ?? new InMemoryTransport();
  const logger = captureLogger();
  const app = createApp({ queue: 'orders', logger, ...options, transport });
  return { app, transport, logger };
}

const json = (body: Buffer) => JSON.parse(body.toString('utf8')) as Record<string, any>;
/**
 * Bounds a drain that waits for a delayed or redelivered message and stops at
 * maxMessages: a short idle would race the timer against a busy machine.
 */
const IDLE_MS = 30_000;

describe('App end to end on the in-memory transport', () => {
  test('publish → handle → ack: the handler sees data and message identity; the queue is empty after', async () => {
    const { app, transport } = setup();
    const seen: Message[] = [];
    app.handle(URN, (data, message) => {
      assert.deepEqual(data, { order_id: 1042, secret: SECRET });
      seen.push(message);
    });
    const id = await app.publish(URN, { order_id: 1042, secret: SECRET }, { traceId: ' trace-123 ' });
    assert.equal(await app.consume({ idleMs: 50 }), 1);
    assert.equal(seen.length, 1);
    const m = seen[0]!;
    assert.equal(m.id, id);
    assert.equal(m.urn, URN);
    assert.equal(m.traceId, 'trace-123');
    assert.equal(m.queue, 'orders');
    assert.equal(m.attempts, 1);
    assert.equal(m.envelope.meta.lang, 'node');
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('a failing handler is retried with backoff and byte-preserving copies, then succeeds', async () => {
    // The broker's clock moves only when the test says: "still delayed" never races a busy machine.
    let now = 1_000_000;
    const broker = new MemoryBroker(() => now);
    const { app, transport } = setup({ transport: new InMemoryTransport({ broker }), retryBackoff: { baseMs: 40, multiplier: 2, maxMs: 1000 } });
    const attempts: number[] = [];
    const bodies: Buffer[] = [];
    app.handle(URN, (_data, m) => {
      attempts.push(m.attempts);
      bodies.push(m.body);
      if (m.attempts < 3) throw new Error('gateway timeout');
    });
    await app.publish(URN, { big: 1, n: 1.5 });
    for (const backoff of [40, 80]) {
      await app.consume({ maxMessages: 1, idleMs: IDLE_MS });
      // The retry copy waits d(n) on the delayed list: d(1) = 40 ms, d(2) = 80 ms.
      now += backoff - 1;
      assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 1, inFlight: 0 }, `not due 1 ms before ${backoff} ms`);
      now += 1;
      assert.equal(transport.broker.stats('orders').ready, 1, `due after ${backoff} ms`);
    }
    await app.consume({ maxMessages: 1, idleMs: IDLE_MS });
    assert.deepEqual(attempts, [1, 2, 3]);
    // Only the top-level attempts changed between deliveries.
    const strip = (b: Buffer) => b.toString('utf8').replace(/"attempts":\d+}$/, '');
    assert.equal(strip(bodies[1]!), strip(bodies[0]!));
    assert.deepEqual(bodies.map((b) => json(b).attempts), [0, 1, 2]);
  });

  test('exhaustion → DLQ record: the delivered bytes verbatim plus a dead_letter block; onFailed runs first', async () => {
    const events: string[] = [];
    const { app, transport, logger } = setup({
      deadLetter: true,
      onFailed: ({ reason, message }) => {
        events.push(`failed:${reason}:${message.attempts}:${transport.broker.stats('orders.dlq').ready}`);
      },
    });
    let last: Buffer | undefined;
    app.handle(URN, (_d, m) => {
      last = m.body;
      const error = new Error('Payment gateway timeout');
      error.name = 'GatewayTimeout';
      throw error;
    });
    await app.publish(URN, { secret: SECRET });
    await app.consume({ idleMs: 100 });
    assert.deepEqual(events, ['failed:failed:3:0']);
    const [record] = transport.messages('orders.dlq');
    assert.ok(record && last, "record && last");
    const text = record.toString('utf8');
    // The delivered bytes with attempts set to the counted attempt, then the block.
    const delivered = last.toString('utf8').replace(/"attempts":2}$/, '"attempts":3}');
    assert.ok(text.startsWith(delivered.slice(0, -1) + ',"dead_letter":{'), 'original bytes kept');
    assert.equal(json(record).attempts, 3);
    const dl = json(record).dead_letter;
    assert.equal(dl.reason, 'failed');
    assert.equal(dl.error, 'Payment gateway timeout');
    assert.equal(dl.exception, 'GatewayTimeout');
    assert.equal(dl.original_queue, 'orders');
    assert.equal(dl.attempts, 3);
    assert.equal(dl.lang, 'node');
    assert.equal(typeof dl.failed_at, 'number');
    assert.equal(transport.broker.stats('orders').ready, 0);
    assert.ok(!logger.text().includes(SECRET), 'no body in logs');
  });

  test('exhaustion without a DLQ drops and logs, calling onDrop', async () => {
    const drops: string[] = [];
    const { app, transport, logger } = setup({ maxAttempts: 2, onDrop: (e) => drops.push(e.why) });
    app.handle(URN, () => {
      throw new Error('nope');
    });
    await app.publish(URN, { secret: SECRET });
    await app.consume({ idleMs: 100 });
    await new Promise((r) => setImmediate(r));
    assert.equal(drops.length, 1);
    assert.match(drops[0]!, /attempt 2 of 2/);
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
    // A lost message is impossible to miss: ERROR, with what identifies it and why.
    const drop = logger.lines.find((l) => l.message.startsWith('dropped'));
    assert.equal(drop?.level, 'error');
    assert.equal(drop?.fields.urn, URN);
    assert.equal(drop?.fields.reason, 'failed');
    assert.equal(drop?.fields.attempt, 2);
    assert.equal(typeof drop?.fields.messageId, 'string');
    assert.equal(typeof drop?.fields.traceId, 'string');
    assert.match(String(drop?.fields.error), /^Error: nope$/);
    assert.match(String(drop?.fields.stack), /\n\s+at /);
  });

  describe('unknown-URN strategies', () => {
    test('delete acknowledges and drops', async () => {
      const { app, transport } = setup({ onUnknownUrn: 'delete', deadLetter: true });
      await app.publish('urn:babel:nobody:home', {});
      await app.consume({ idleMs: 50 });
      assert.equal(transport.broker.stats('orders').ready, 0);
      assert.equal(transport.messages('orders.dlq').length, 0);
    });

    test('dead_letter quarantines with reason unknown_urn', async () => {
      const { app, transport } = setup({ onUnknownUrn: 'dead_letter', deadLetter: true });
      await app.publish('urn:babel:nobody:home', {});
      await app.consume({ idleMs: 50 });
      const [record] = transport.messages('orders.dlq');
      assert.equal(json(record!).dead_letter.reason, 'unknown_urn');
      assert.equal(json(record!).dead_letter.attempts, 1);
    });

    test('release redelivers after the configured delay, bounded by maxAttempts', async () => {
      const { app, transport } = setup({ onUnknownUrn: 'release', unknownUrnReleaseDelayMs: 60, deadLetter: true });
      await app.publish('urn:babel:nobody:home', {});
      await app.consume({ maxMessages: 1, idleMs: 20 });
      assert.equal(transport.broker.stats('orders').delayed, 1);
      await app.consume({ maxMessages: 2, idleMs: IDLE_MS });
      const [record] = transport.messages('orders.dlq');
      assert.equal(json(record!).dead_letter.reason, 'unknown_urn');
      assert.equal(json(record!).dead_letter.attempts, 3);
    });

    test('fail (default) retries, then dead-letters with reason unknown_urn', async () => {
      const { app, transport } = setup({ deadLetter: { queue: 'triage' } });
      await app.publish('urn:babel:nobody:home', {});
      await app.consume({ idleMs: 100 });
      assert.equal(json(transport.messages('triage')[0]!).dead_letter.reason, 'unknown_urn');
    });
  });

  describe('poison never reaches a handler', () => {
    const cases: [string, Buffer, (record: Record<string, any>) => void][] = [
      ['malformed JSON', Buffer.from(`{"job": ${SECRET}`), (r) => assert.equal(r.raw, `{"job": ${SECRET}`)],
      ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), (r) => {
        assert.equal(r.raw_encoding, 'base64');
        assert.deepEqual(Buffer.from(r.raw, 'base64'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
      }],
      ['identity-less object', Buffer.from(`{"data":{"s":"${SECRET}"},"attempts":0}`), (r) => {
        assert.deepEqual(r.data, { s: SECRET });
        assert.equal(r.raw, undefined);
      }],
      ['a JSON array', Buffer.from('[1,2]'), (r) => assert.equal(r.raw, '[1,2]')],
    ];
    for (const [name, body, check] of cases) {
      test(`${name} → poison record on the DLQ, original kept`, async () => {
        const { app, transport, logger } = setup({ deadLetter: true });
        let called = false;
        app.handle(URN, () => {
          called = true;
        });
        await transport.publishRaw('orders', body);
        await app.consume({ idleMs: 50 });
        assert.equal(called, false);
        const records = transport.messages('orders.dlq');
        assert.equal(records.length, 1);
        const record = json(records[0]!);
        assert.equal(record.dead_letter.reason, 'poison');
        assert.equal(record.dead_letter.attempts, 1);
        check(record);
        assert.equal(transport.broker.stats('orders').ready, 0, 'never retried');
        assert.ok(!logger.text().includes(SECRET), "!logger.text().includes(SECRET)");
      });
    }

    test('a body over maxBodyBytes is poison', async () => {
      const { app, transport } = setup({ deadLetter: true, maxBodyBytes: 64 });
      app.handle(URN, () => assert.fail('handler must not run'));
      await app.publish(URN, { pad: 'x'.repeat(100) });
      await app.consume({ idleMs: 50 });
      assert.match(json(transport.messages('orders.dlq')[0]!).dead_letter.error, /exceeds the 64-byte limit/);
    });

    test('without a DLQ the in-memory binding drops poison (logged)', async () => {
      const { app, transport, logger } = setup();
      await transport.publishRaw('orders', Buffer.from('not json'));
      await app.consume({ idleMs: 50 });
      assert.equal(transport.broker.stats('orders').ready, 0);
      assert.ok(logger.lines.some((l) => l.level === 'error' && l.message.startsWith('dropped') && /poison/.test(String(l.fields.why))), "logger.lines.some((l) => l.level === 'error' && l.message.startsWith('dropped') && /poison/.test(...");
    });
  });

  test('version gate: a native schema version other than 1 goes raw, byte for byte, to the DLQ on first delivery', async () => {
    const { app, transport } = setup({ deadLetter: true, maxAttempts: 5 });
    app.handle(URN, () => assert.fail('handler must not run'));
    const body = Buffer.from('{"job":"urn:babel:orders:created","v2":true}');
    await transport.publishRaw('orders', body, { 'bq-schema-version': ' 2 ' });
    await app.consume({ idleMs: 50 });
    assert.deepEqual(transport.messages('orders.dlq'), [body]);
  });

  test('a blank native schema version falls through to decode', async () => {
    const { app, transport } = setup();
    let handled = 0;
    app.handle(URN, () => void handled++);
    await app.publish(URN, {});
    const [body] = transport.messages('orders');
    transport.broker.purge('orders');
    await transport.publishRaw('orders', body!, { 'bq-schema-version': '  ' });
    await app.consume({ idleMs: 50 });
    assert.equal(handled, 1);
  });

  test('a failed DLQ write leaves the message unsettled; the next delivery writes it', async () => {
    let refuse = true;
    const transport = new InMemoryTransport({
      redeliveryDelayMs: 10,
      beforeWrite: (queue) => {
        if (queue === 'orders.dlq' && refuse) throw new Error('disk full');
      },
    });
    const { app, logger } = setup({ transport, deadLetter: true, maxAttempts: 1 });
    app.handle(URN, () => {
      throw new Error('boom');
    });
    await app.publish(URN, {});
    await app.consume({ maxMessages: 1, idleMs: 20 });
    assert.equal(transport.messages('orders.dlq').length, 0);
    // One snapshot: between two stats() calls the 10 ms redelivery delay can pass and count the message twice.
    const kept = transport.broker.stats('orders');
    assert.equal(kept.delayed + kept.ready, 1, 'kept');
    assert.ok(logger.lines.some((l) => l.level === 'error' && /dead-letter write failed/.test(l.message)), "logger.lines.some((l) => l.level === 'error' && /dead-letter write failed/.test(l.message))");
    refuse = false;
    await app.consume({ maxMessages: 1, idleMs: IDLE_MS });
    assert.equal(transport.messages('orders.dlq').length, 1);
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('decode warnings are logged with the JSON pointer, never the body', async () => {
    const { app, transport, logger } = setup();
    app.handle(URN, () => undefined);
    await app.publish(URN, { s: SECRET });
    const [body] = transport.messages('orders');
    transport.broker.purge('orders');
    await transport.publishRaw('orders', Buffer.from(body!.toString().replace('{"job"', '{"timestamp":1,"job"')));
    await app.consume({ idleMs: 50 });
    assert.ok(logger.lines.some((l) => l.level === 'warn' && l.fields.pointer === '/timestamp'), "logger.lines.some((l) => l.level === 'warn' && l.fields.pointer === '/timestamp')");
    assert.ok(!logger.text().includes(SECRET), "!logger.text().includes(SECRET)");
  });

  test('a decode warning names the queue its message came from, on each queue one App consumes', async () => {
    const { app, transport, logger } = setup();
    app.handle(URN, () => undefined);
    await app.publish(URN, { n: 1 });
    const [body] = transport.messages('orders');
    transport.broker.purge('orders');
    const withForbiddenKey = Buffer.from(body!.toString().replace('{"job"', '{"timestamp":1,"job"'));
    for (const queue of ['orders', 'billing']) {
      await transport.publishRaw(queue, withForbiddenKey);
      await app.consume({ queue, idleMs: 50 });
    }
    const warned = logger.lines.filter((l) => l.level === 'warn' && l.fields.pointer === '/timestamp').map((l) => l.fields.queue);
    assert.deepEqual(warned, ['orders', 'billing'], 'one decode warning per queue, each with its own queue');
  });

  test('concurrency is honoured and a graceful stop loses nothing and acks nothing twice', async () => {
    const { app, transport } = setup();
    let active = 0;
    let peak = 0;
    const done: number[] = [];
    const controller = new AbortController();
    app.handle(URN, async (data) => {
      active += 1;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 40));
      active -= 1;
      done.push(data.n as number);
      if (done.length === 4) controller.abort();
    });
    for (let n = 0; n < 12; n++) await app.publish(URN, { n });
    await app.run({ concurrency: 3, signal: controller.signal });
    assert.equal(peak, 3);
    const stats = transport.broker.stats('orders');
    assert.equal(stats.inFlight, 0, 'every in-flight delivery settled before run resolved');
    assert.equal(done.length + stats.ready, 12, 'no message lost');
    assert.equal(new Set(done).size, done.length, 'none handled twice');
  });

  test('delayed publish is not delivered before its time', async () => {
    const { app } = setup();
    const at: number[] = [];
    app.handle(URN, () => void at.push(Date.now()));
    const start = Date.now();
    await app.publish(URN, {}, { delayMs: 150 });
    await app.consume({ idleMs: IDLE_MS, maxMessages: 1 });
    assert.ok(at[0]! - start >= 140, `delivered after ${at[0]! - start} ms`);
  });

  describe('configuration is validated up front', () => {
    const bad: [string, Record<string, unknown>][] = [
      ['negative maxAttempts', { maxAttempts: -1 }],
      ['fractional maxAttempts', { maxAttempts: 1.5 }],
      ['unknown strategy', { onUnknownUrn: 'ignore' }],
      ['negative backoff', { retryBackoff: { baseMs: -1 } }],
      ['NaN multiplier', { retryBackoff: { multiplier: NaN } }],
    ];
    for (const [name, options] of bad) {
      test(name, () => {
        assert.throws(() => createApp({ transport: new InMemoryTransport(), ...options } as never), ConfigurationError);
      });
    }
    test('a duplicate handler and a blank URN are refused', () => {
      const { app } = setup();
      app.handle(URN, () => undefined);
      assert.throws(() => app.handle(` ${URN} `, () => undefined), /already registered/);
      assert.throws(() => app.handle('  ', () => undefined), ConfigurationError);
    });
    test('a delayed publish on a transport without delays is refused before anything is sent', async () => {
      const transport = new InMemoryTransport();
      Object.assign(transport, { capabilities: { delayedPublish: false, delayedRetry: false, retry: true } });
      const { app } = setup({ transport });
      await assert.rejects(app.publish(URN, {}, { delayMs: 10 }), CapabilityError);
      await assert.rejects(app.publish(URN, {}, { delayMs: -1 }), ConfigurationError);
      assert.equal(transport.messages('orders').length, 0);
    });
    test('zero concurrency is refused', async () => {
      const { app } = setup();
      await assert.rejects(app.consume({ concurrency: 0 }), ConfigurationError);
    });
  });
});

describe('the worker survives what it cannot settle', () => {
  test('a settle that throws unexpectedly is logged, the delivery left for redelivery, and the loop goes on', async () => {
    // The broker redelivers once the lease of the unsettled delivery runs out.
    const transport = new InMemoryTransport({ visibilityTimeoutMs: 50 });
    const { app, logger } = setup({ transport });
    let calls = 0;
    app.handle(URN, () => void calls++);
    await app.publish(URN, { n: 1 });
    await app.publish(URN, { n: 2 });
    const consume = transport.consume.bind(transport);
    let broken = true;
    transport.consume = (queue, onDelivery, options) => consume(queue, async (delivery) => {
      const settle = delivery.settle;
      await onDelivery({
        ...delivery,
        nativeAttempts: delivery.nativeAttempts,
        settle: async (decision) => {
          if (broken && decision.kind === 'ack') {
            broken = false;
            throw new TypeError('bug in a binding');
          }
          return settle(decision);
        },
      });
    }, options);
    // Two messages, and the first again once its lease ran out.
    await app.consume({ maxMessages: 3, idleMs: IDLE_MS });
    assert.equal(calls, 3, 'the first message ran again after its failed settle');
    assert.ok(logger.lines.some((l) => l.level === 'error' && /settlement failed/.test(l.message)), "logger.lines.some((l) => l.level === 'error' && /settlement failed/.test(l.message))");
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('an unexpected error before settling (a binding bug) leaves the delivery unsettled and is logged', async () => {
    const transport = new InMemoryTransport({ redeliveryDelayMs: 0 });
    const { app, logger } = setup({ transport });
    let calls = 0;
    app.handle(URN, () => void calls++);
    await app.publish(URN, {});
    const consume = transport.consume.bind(transport);
    let broken = true;
    transport.consume = (queue, onDelivery, options) => consume(queue, (delivery) => onDelivery({
      ...delivery,
      settle: delivery.settle,
      get nativeAttempts() {
        if (broken) {
          broken = false;
          throw new TypeError('bug in a binding');
        }
        return delivery.nativeAttempts;
      },
    }), options);
    await app.consume({ maxMessages: 2, idleMs: IDLE_MS });
    assert.equal(calls, 1);
    assert.ok(logger.lines.some((l) => l.level === 'error' && /unexpected error/.test(l.message)), "logger.lines.some((l) => l.level === 'error' && /unexpected error/.test(l.message))");
    assert.deepEqual(transport.broker.stats('orders'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('attempts beyond 2^53 still dead-letter (the counted attempt is any integer)', async () => {
    const { app, transport } = setup({ deadLetter: true });
    app.handle(URN, () => {
      throw new Error('boom');
    });
    await app.publish(URN, {});
    const [body] = transport.messages('orders');
    transport.broker.purge('orders');
    await transport.publishRaw('orders', Buffer.from(body!.toString().replace(/"attempts":0}$/, '"attempts":12345678901234567890}')));
    await app.consume({ idleMs: 50 });
    const [record] = transport.messages('orders.dlq');
    assert.ok(record, 'dead-lettered');
    assert.equal(json(record).dead_letter.reason, 'failed');
  });
});
