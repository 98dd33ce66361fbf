import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CapabilityError,
  ConfigurationError,
  createApp,
  InMemoryTransport,
  redrive,
  REPLAY_BYPASS_HEADER,
  silentLogger,
  type ConsumeOptions,
  type Transport,
} from '@babelqueue/core';
import { type Delivery, type RawPublishOptions } from '@babelqueue/core/binding';

const DLQ = 'orders.dlq';

/** A failed record as another SDK wrote it: odd spacing, a big integer, an unknown member, key order kept. */
const FAILED =
  '{"job":"urn:babel:orders:charge", "trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":12345678901234567890,"amount":1.0},' +
  '"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders-from-meta","lang":"php","schema_version":1,"created_at":1749132727000},' +
  '"attempts":3,"x_vendor":{"k":"v"},' +
  '"dead_letter":{"reason":"failed","error":"Payment gateway timeout","exception":"App\\\\GatewayTimeout","failed_at":1749132730000,"original_queue":"orders","attempts":3,"lang":"php"}}';
/** The same bytes with the dead_letter member removed and attempts 0. */
const FAILED_RESET =
  '{"job":"urn:babel:orders:charge", "trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":12345678901234567890,"amount":1.0},' +
  '"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders-from-meta","lang":"php","schema_version":1,"created_at":1749132727000},' +
  '"attempts":0,"x_vendor":{"k":"v"}}';

function record(id: string, extra: { originalQueue?: string; metaQueue?: string; reason?: string } = {}): string {
  const dl = extra.originalQueue === undefined ? '' :
    `,"dead_letter":{"reason":"${extra.reason ?? 'failed'}","error":"boom","exception":"Error","failed_at":1,"original_queue":"${extra.originalQueue}","attempts":3,"lang":"node"}`;
  return `{"job":"urn:babel:t:${id}","trace_id":"trace-${id}","data":{},"meta":{"id":"${id}","queue":"${extra.metaQueue ?? 'meta-q'}","lang":"node","schema_version":1,"created_at":1},"attempts":3${dl}}`;
}

const POISON_RAW = '{"raw":"not json {","dead_letter":{"reason":"poison","error":"not JSON","exception":null,"failed_at":1,"original_queue":"orders","attempts":1,"lang":"node"}}';
const POISON_BASE64 = '{"raw":"/w4=","raw_encoding":"base64","dead_letter":{"reason":"poison","error":"bad utf-8","exception":null,"failed_at":1,"original_queue":"orders","attempts":1,"lang":"node"}}';
/** A version-gated record: the raw original, schema_version 2, no dead_letter block. */
const VERSION_GATED = '{"job":"urn:babel:t:v2","trace_id":"t","data":{},"meta":{"id":"v2","queue":"orders","lang":"go","schema_version":2,"created_at":1},"attempts":0}';

async function dlqWith(bodies: (string | Buffer)[], options: ConstructorParameters<typeof InMemoryTransport>[0] = {}) {
  const transport = new InMemoryTransport(options);
  for (const body of bodies) await transport.publishRaw(DLQ, typeof body === 'string' ? Buffer.from(body) : body);
  return transport;
}

const texts = (transport: InMemoryTransport, queue: string) => transport.messages(queue).map((b) => b.toString('utf8'));
const FAST = { idleMs: 30 } as const;

describe('redrive (ADR-0026) on the in-memory transport', () => {
  test('a failed record goes back to dead_letter.original_queue: dead_letter removed, attempts 0, every other byte kept', async () => {
    const transport = await dlqWith([FAILED]);
    const result = await redrive(transport, { from: DLQ, ...FAST });
    assert.equal(result.redriven, 1);
    assert.equal(result.skipped, 0);
    assert.deepEqual(result.items, [{
      messageId: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567',
      traceId: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
      urn: 'urn:babel:orders:charge',
      reason: 'failed',
      from: DLQ,
      to: 'orders',
      redriven: true,
      bypassed: false,
    }]);
    assert.deepEqual(texts(transport, 'orders'), [FAILED_RESET]);
    assert.deepEqual(transport.broker.stats(DLQ), { ready: 0, delayed: 0, inFlight: 0 });
    assert.deepEqual(transport.broker.stats('orders-from-meta'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('the target: toQueue overrides; else dead_letter.original_queue; else meta.queue', async () => {
    const cases = [
      { body: record('a', { originalQueue: 'orig', metaQueue: 'meta' }), toQueue: undefined, to: 'orig' },
      { body: record('c', { originalQueue: '', metaQueue: 'meta' }), toQueue: undefined, to: 'meta' },
      { body: record('d', { originalQueue: 'orig', metaQueue: 'meta' }), toQueue: 'override', to: 'override' },
    ];
    for (const { body, toQueue, to } of cases) {
      const transport = await dlqWith([body]);
      const result = await redrive(transport, { from: DLQ, ...FAST, ...(toQueue ? { toQueue } : {}) });
      assert.equal(result.items[0]?.to, to, body);
      assert.equal(transport.messages(to).length, 1, body);
      assert.equal(JSON.parse(texts(transport, to)[0]!).attempts, 0);
      assert.equal(JSON.parse(texts(transport, to)[0]!).dead_letter, undefined);
    }
  });

  test('undecodable and not-accepted records (poison wrappers, version-gated, non-JSON, no queue, not editable) are restored byte for byte and skipped', async () => {
    const notUtf8 = Buffer.from([0xff, 0x0e]);
    const noQueue = '{"job":"urn:babel:t:x","trace_id":"t","data":{},"meta":{"id":"nq","lang":"node","schema_version":1,"created_at":1},"attempts":1}';
    // Decodes (the UTF-8 decoder drops a BOM) but cannot be edited byte for byte: kept rather than rewritten.
    const withBom = `\ufeff${record('bom', { originalQueue: 'q' })}`;
    const bodies = [POISON_RAW, POISON_BASE64, VERSION_GATED, 'plain text', '[1,2]', noQueue, withBom];
    const transport = await dlqWith([...bodies, notUtf8]);
    const result = await redrive(transport, { from: DLQ, ...FAST });
    assert.equal(result.redriven, 0);
    assert.equal(result.skipped, 8);
    for (const item of result.items) {
      assert.equal(item.to, '');
      assert.equal(item.redriven, false);
      assert.equal(item.from, DLQ);
    }
    assert.equal(result.items[0]?.reason, 'poison');
    assert.equal(result.items[2]?.messageId, 'v2');
    const after = transport.messages(DLQ);
    assert.deepEqual(after.slice(0, 7).map((b) => b.toString('utf8')), bodies);
    assert.deepEqual(after[7], notUtf8);
    assert.deepEqual(transport.broker.stats(DLQ), { ready: 8, delayed: 0, inFlight: 0 });
    assert.equal(transport.messages('q').length, 0);
  });

  describe('version-gated records are never redriven (they stay on the DLQ, reason version_gate)', () => {
    /** Ends the drain at `max` records, never on a short idle a busy machine could outrun. */
    const UNTIL = (max: number) => ({ max, idleMs: 30_000 });
    /** The gate's raw record of a message whose body a v1 handler would accept: no dead_letter block. */
    const GATED_V1 = '{"job":"urn:babel:t:g","trace_id":"t-g","data":{},"meta":{"id":"g","queue":"orders","lang":"go","schema_version":1,"created_at":1},"attempts":0}';

    for (const toQueue of [undefined, 'elsewhere']) {
      test(`a record with no dead_letter block is restored byte for byte, never sent to meta.queue${toQueue ? ' nor to toQueue' : ''}`, async () => {
        const transport = await dlqWith([GATED_V1, record('f', { originalQueue: 'orders' })]);
        const result = await redrive(transport, { from: DLQ, ...UNTIL(2), ...(toQueue ? { toQueue } : {}) });
        assert.deepEqual(result.items.map((i) => [i.messageId, i.reason, i.redriven, i.to]), [
          ['g', 'version_gate', false, ''],
          ['f', 'failed', true, toQueue ?? 'orders'],
        ]);
        assert.deepEqual({ redriven: result.redriven, skipped: result.skipped }, { redriven: 1, skipped: 1 });
        assert.deepEqual(texts(transport, DLQ), [GATED_V1]);
        assert.equal(transport.messages(toQueue ?? 'orders').length, 1, 'only the failed record moved');
        assert.equal(transport.messages('meta-q').length, 0);
      });
    }

    test('a record whose DLQ delivery carries a gated native schema version is kept, even with a dead_letter block', async () => {
      const transport = new InMemoryTransport();
      const failed = record('h', { originalQueue: 'orders' });
      await transport.publishRaw(DLQ, Buffer.from(failed), { 'bq-schema-version': '2' });
      const result = await redrive(transport, { from: DLQ, ...UNTIL(1) });
      assert.deepEqual(result.items.map((i) => [i.reason, i.redriven]), [['version_gate', false]]);
      assert.deepEqual(texts(transport, DLQ), [failed]);
      assert.equal(transport.messages('orders').length, 0);
    });

    test('end to end: the gate writes the raw record, redrive leaves it on the DLQ and no v1 handler ever sees it', async () => {
      const transport = new InMemoryTransport();
      const app = createApp({ transport, queue: 'orders', deadLetter: true, logger: silentLogger });
      let handled = 0;
      app.handle('urn:babel:t:g', () => void handled++);
      await transport.publishRaw('orders', Buffer.from(GATED_V1), { 'bq-schema-version': '2' });
      assert.equal(await app.consume({ idleMs: 50 }), 1);
      assert.deepEqual(texts(transport, DLQ), [GATED_V1], 'the gate wrote the raw body, no dead_letter block');
      const result = await redrive(transport, { from: DLQ, ...UNTIL(1) });
      assert.deepEqual(result.items.map((i) => [i.reason, i.redriven]), [['version_gate', false]]);
      assert.deepEqual(texts(transport, DLQ), [GATED_V1]);
      assert.equal(await app.consume({ idleMs: 50 }), 0, 'nothing went back to work');
      assert.equal(handled, 0);
    });
  });

  test('select: unselected records are restored unchanged with to ""; selected ones are redriven', async () => {
    const transport = await dlqWith([record('a', { originalQueue: 'q' }), record('b', { originalQueue: 'q' }), record('c', { originalQueue: 'q' })]);
    const result = await redrive(transport, { from: DLQ, select: (env) => env.meta.id === 'b', ...FAST });
    assert.deepEqual(result.items.map((i) => [i.messageId, i.redriven, i.to]), [['a', false, ''], ['b', true, 'q'], ['c', false, '']]);
    assert.deepEqual({ redriven: result.redriven, skipped: result.skipped }, { redriven: 1, skipped: 2 });
    assert.deepEqual(texts(transport, DLQ), [record('a', { originalQueue: 'q' }), record('c', { originalQueue: 'q' })]);
    assert.equal(transport.messages('q').length, 1);
  });

  test('a throwing select restores the record it was asked about, leaves the rest for redelivery, and rethrows', async () => {
    const transport = await dlqWith([record('a', { originalQueue: 'q' }), record('b', { originalQueue: 'q' })], { redeliveryDelayMs: 0 });
    await assert.rejects(redrive(transport, { from: DLQ, select: () => { throw new Error('bad predicate'); }, ...FAST }), /bad predicate/);
    assert.equal(transport.messages(DLQ).length, 2);
    assert.equal(transport.messages('q').length, 0);
  });

  test('dry run: every record restored unchanged, skipped, with to still reported; each record met once (drain first)', async () => {
    const bodies = [record('a', { originalQueue: 'q1' }), record('b', { originalQueue: 'q2' }), POISON_RAW];
    const transport = await dlqWith(bodies);
    const result = await redrive(transport, { from: DLQ, dryRun: true, ...FAST });
    assert.deepEqual(result.items.map((i) => [i.messageId, i.to, i.redriven]), [['a', 'q1', false], ['b', 'q2', false], ['', '', false]]);
    assert.deepEqual({ redriven: result.redriven, skipped: result.skipped }, { redriven: 0, skipped: 3 });
    assert.deepEqual(texts(transport, DLQ), bodies);
    assert.equal(transport.messages('q1').length + transport.messages('q2').length, 0);
  });

  test('max takes at most that many records; the rest stay on the DLQ untouched', async () => {
    const transport = await dlqWith(['a', 'b', 'c', 'd'].map((id) => record(id, { originalQueue: 'q' })));
    const result = await redrive(transport, { from: DLQ, max: 2, ...FAST });
    assert.deepEqual(result.items.map((i) => i.messageId), ['a', 'b']);
    assert.deepEqual(transport.messages('q').map((b) => JSON.parse(b.toString()).meta.id), ['a', 'b']);
    assert.deepEqual(transport.messages(DLQ).map((b) => JSON.parse(b.toString()).meta.id), ['c', 'd']);
  });

  test('an empty DLQ gives an empty result', async () => {
    const transport = new InMemoryTransport();
    assert.deepEqual(await redrive(transport, { from: DLQ, ...FAST }), { redriven: 0, skipped: 0, items: [] });
  });

  test('a failed write to the target restores the record to the DLQ, acks it, leaves the rest for redelivery, and rethrows', async () => {
    const refuse = new Error('broker refused the write');
    const transport = await dlqWith(['a', 'b', 'c'].map((id) => record(id, { originalQueue: 'q' })), {
      redeliveryDelayMs: 0,
      beforeWrite: (queue, body) => {
        if (queue === 'q' && body.includes('"id":"b"')) throw refuse;
      },
    });
    await assert.rejects(redrive(transport, { from: DLQ, ...FAST }), (e) => e === refuse);
    assert.deepEqual(transport.messages('q').map((b) => JSON.parse(b.toString()).meta.id), ['a']);
    // b restored (acked), c left unsettled and offered again: nothing lost, nothing duplicated.
    assert.deepEqual(transport.messages(DLQ).map((b) => JSON.parse(b.toString()).meta.id).sort(), ['b', 'c']);
    assert.deepEqual(transport.broker.stats(DLQ), { ready: 2, delayed: 0, inFlight: 0 });
    // The restored b is the record byte for byte, dead_letter and attempts kept.
    assert.ok(texts(transport, DLQ).includes(record('b', { originalQueue: 'q' })), "texts(transport, DLQ).includes(record('b', { originalQueue: 'q' }))");
  });

  test('a failed write back to the DLQ leaves that record (and the rest) unsettled and rethrows', async () => {
    const refuse = new Error('DLQ write refused');
    let armed = false;
    const transport = await dlqWith([POISON_RAW, record('x', { originalQueue: 'q' })], {
      redeliveryDelayMs: 0,
      beforeWrite: (queue) => {
        if (armed && queue === DLQ) throw refuse;
      },
    });
    armed = true;
    await assert.rejects(redrive(transport, { from: DLQ, ...FAST }), (e) => e === refuse);
    assert.deepEqual(transport.broker.stats(DLQ), { ready: 2, delayed: 0, inFlight: 0 });
    assert.equal(transport.messages('q').length, 0);
  });

  test('bypass adds the native header bq-replay-bypass: "1" (never in the body); riders such as traceparent are kept', async () => {
    const transport = new InMemoryTransport();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await transport.publishRaw(DLQ, Buffer.from(record('a', { originalQueue: 'q' })), { traceparent, 'x-other': 'dropped' });
    await transport.publishRaw(DLQ, Buffer.from(record('b', { originalQueue: 'q' })));
    const result = await redrive(transport, { from: DLQ, bypass: true, ...FAST });
    assert.deepEqual(result.items.map((i) => i.bypassed), [true, true]);
    const [a, b] = transport.broker.ready('q');
    assert.deepEqual(a?.headers, { traceparent, [REPLAY_BYPASS_HEADER]: '1' });
    assert.deepEqual(b?.headers, { [REPLAY_BYPASS_HEADER]: '1' });
    assert.ok(!a?.body.includes(REPLAY_BYPASS_HEADER), "!a?.body.includes(REPLAY_BYPASS_HEADER)");

    const plain = await dlqWith([record('c', { originalQueue: 'q' })]);
    const r2 = await redrive(plain, { from: DLQ, ...FAST });
    assert.equal(r2.items[0]?.bypassed, false);
    assert.deepEqual(plain.broker.ready('q')[0]?.headers, {});
  });

  test('a target that is the DLQ itself is refused (toQueue) or skipped (a record whose own queue is the DLQ): nothing loops', async () => {
    const transport = await dlqWith([record('a', { originalQueue: DLQ }), record('b', { originalQueue: 'q' })]);
    await assert.rejects(redrive(transport, { from: DLQ, toQueue: DLQ, ...FAST }), (e: Error) =>
      e instanceof ConfigurationError && /the dead-letter queue it reads/.test(e.message));
    const result = await redrive(transport, { from: DLQ, ...FAST });
    assert.deepEqual(result.items.map((i) => [i.messageId, i.redriven, i.to]), [['a', false, ''], ['b', true, 'q']]);
    assert.equal(transport.messages(DLQ).length, 1, 'the looping record is restored to the DLQ');
  });

  test('bypass on a transport that carries no headers (Redis zset) is refused before anything moves, never reported as a replay', async () => {
    const transport = await dlqWith([record('a', { originalQueue: 'q' })]);
    Object.assign(transport, { capabilities: { ...transport.capabilities, headers: false } });
    await assert.rejects(redrive(transport, { from: DLQ, bypass: true, ...FAST }), (e: Error) =>
      e instanceof CapabilityError && /carries no native headers, so the replay-bypass header/.test(e.message));
    assert.equal(transport.messages(DLQ).length, 1);
    assert.equal(transport.messages('q').length, 0);
    // Without bypass the same transport redrives as usual.
    const result = await redrive(transport, { from: DLQ, ...FAST });
    assert.deepEqual(result.items.map((i) => [i.redriven, i.bypassed]), [[true, false]]);
  });

  test('a dead-lettered message redriven through the App starts again at attempt 1 and succeeds', async () => {
    const transport = new InMemoryTransport();
    const app = createApp({ transport, queue: 'orders', deadLetter: true, maxAttempts: 3, logger: silentLogger });
    let healthy = false;
    const seen: number[] = [];
    app.handle('urn:babel:orders:charge', (_data, message) => {
      seen.push(message.attempts);
      if (!healthy) throw new Error('gateway down');
    });
    const id = await app.publish('urn:babel:orders:charge', { order_id: 1 });
    await app.consume({ idleMs: 30 });
    assert.deepEqual(seen, [1, 2, 3]);
    const dlqBody = transport.messages('orders.dlq')[0]!;
    healthy = true;
    const result = await redrive(transport, { from: app.deadLetterQueueName(), select: (env) => env.meta.id === id, ...FAST });
    assert.equal(result.redriven, 1);
    const back = transport.messages('orders')[0]!;
    assert.equal(back.toString(), dlqBody.toString().replace(/"attempts":\d+,"dead_letter":\{.*\}\}$/, '"attempts":0}'));
    await app.consume({ idleMs: 30 });
    assert.deepEqual(seen, [1, 2, 3, 1]);
    assert.equal(transport.messages('orders.dlq').length, 0);
  });

  test('options are checked before anything is taken', async () => {
    const transport = await dlqWith([record('a', { originalQueue: 'q' })]);
    for (const bad of [{ from: '' }, { from: DLQ, max: -1 }, { from: DLQ, max: 1.5 }, { from: DLQ, toQueue: ' ' }, { from: DLQ, idleMs: -1 }]) {
      await assert.rejects(redrive(transport, bad), ConfigurationError, JSON.stringify(bad));
    }
    const noRaw: Transport = {
      rules: transport.rules,
      capabilities: transport.capabilities,
      target: transport.target,
      connect: async () => undefined,
      publish: (message) => transport.publish(message),
      consume: (queue, onDelivery, options) => transport.consume(queue, onDelivery, options),
      close: async () => undefined,
    };
    await assert.rejects(redrive(noRaw, { from: DLQ }), CapabilityError);
    assert.equal(transport.messages(DLQ).length, 1);
  });
});

describe('redrive keeps the record key (Kafka: seed 000, "Record key on republish")', () => {
  test('the reset write and every restore carry the consumed key byte for byte', async () => {
    const transport = new InMemoryTransport();
    const key = Buffer.from([0x00, 0xff, 0x10]);
    await transport.publishRaw(DLQ, Buffer.from(record('k1', { originalQueue: 'orders' })), {}, { key });
    await transport.publishRaw(DLQ, Buffer.from(POISON_RAW), {}, { key: null });
    const result = await redrive(transport, { from: DLQ, idleMs: 100 });
    assert.equal(result.redriven, 1);
    assert.deepEqual(transport.broker.ready('orders').map((m) => m.key), [key]);
    assert.deepEqual(transport.broker.ready(DLQ).map((m) => m.key), [null]);
  });
});

describe('redrive keeps a null value null (a Kafka tombstone)', () => {
  /** Marks every delivery as a null value, as the Kafka binding does for a tombstone, and records each raw write. */
  class TombstoneTransport extends InMemoryTransport {
    readonly writes: { queue: string; body: Buffer; options: RawPublishOptions | undefined }[] = [];

    override consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
      return super.consume(queue, (d) => onDelivery({
        body: d.body,
        queue: d.queue,
        headers: d.headers,
        key: d.key ?? null,
        nullValue: d.body.length === 0,
        nativeAttempts: d.nativeAttempts,
        settle: (decision) => d.settle(decision),
      }), options);
    }

    override async publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>, options?: RawPublishOptions): Promise<void> {
      this.writes.push({ queue, body, options });
      await super.publishRaw(queue, body, headers, options);
    }
  }

  test('the undecodable null value is restored with nullValue and its key; other records are written as bytes', async () => {
    const transport = new TombstoneTransport();
    const key = Buffer.from('k');
    await transport.publishRaw(DLQ, Buffer.alloc(0), {}, { key });
    await transport.publishRaw(DLQ, Buffer.from(POISON_RAW), {}, { key: null });
    transport.writes.length = 0;
    const result = await redrive(transport, { from: DLQ, idleMs: 100 });
    assert.deepEqual([result.redriven, result.skipped], [0, 2]);
    assert.deepEqual(transport.writes, [
      { queue: DLQ, body: Buffer.alloc(0), options: { key, nullValue: true } },
      { queue: DLQ, body: Buffer.from(POISON_RAW), options: { key: null } },
    ], 'only the null value is written back as null');
  });
});
