import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeadLetterWriteError } from '@babelqueue/core';
import { reconcileAttempts } from '@babelqueue/core/binding';
import type { KafkaMessage } from 'kafkajs';
import { KafkaDelivery, type RecordWrite } from '../src/delivery.js';
import { KAFKA_RULES } from '../src/rules.js';
import { captureLogger } from '../../../test/support/capture-logger.js';

const b = (s: string) => Buffer.from(s, 'utf8');
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const BODY = '{"job":"urn:babel:orders:created","trace_id":"t","data":{"big":12345678901234567890},"meta":{"id":"m","queue":"orders","lang":"php","schema_version":1,"created_at":1},"attempts":0}';

function record(over: Partial<KafkaMessage> = {}): KafkaMessage {
  return {
    key: Buffer.from([0x00, 0xff, 0x10]),
    value: b(BODY),
    timestamp: '1000',
    attempts: 0,
    offset: '7',
    size: 0,
    headers: {
      'bq-job': b('urn:babel:orders:created'),
      'bq-attempts': b('1'),
      'bq-schema-version': b('1'),
      traceparent: b(TRACEPARENT),
    },
    ...over,
  } as unknown as KafkaMessage;
}

function harness(tiers: number[] = [500, 1000], fail = false) {
  const writes: RecordWrite[] = [];
  const logger = captureLogger();
  const ctx = {
    retryTiersMs: tiers,
    logger,
    write: async (r: RecordWrite) => {
      if (fail) throw new Error('broker down');
      writes.push(r);
    },
  };
  return { writes, ctx, logger };
}

describe('KafkaDelivery', () => {
  it('exposes the body, text headers, the version-gate value and header-authoritative attempts', () => {
    const d = new KafkaDelivery('orders', record({ headers: { 'bq-schema-version': b(' 2 '), 'bq-attempts': b('4') } }), harness().ctx);
    assert.equal(d.body.toString(), BODY);
    assert.equal(d.nativeSchemaVersion, ' 2 ', 'the raw text: the core gate reads it untrimmed');
    assert.equal(d.nativeAttempts, 4);
    assert.equal(reconcileAttempts(KAFKA_RULES.attempts, 9, d.nativeAttempts), 4, 'the header wins, even when lower');
    assert.deepEqual(d.key, Buffer.from([0x00, 0xff, 0x10]));
    assert.deepEqual(d.headers, { 'bq-schema-version': ' 2 ', 'bq-attempts': '4' });
    const bare = new KafkaDelivery('orders', record({ headers: {}, value: null }), harness().ctx);
    assert.equal(bare.nativeSchemaVersion, undefined);
    assert.equal(bare.nativeAttempts, undefined);
    assert.equal(reconcileAttempts(KAFKA_RULES.attempts, 3, bare.nativeAttempts), 3);
    assert.equal(bare.body.length, 0, 'a null value is an empty (poison) body');
  });

  it('ack and drop settle without writing', async () => {
    for (const decision of [{ kind: 'ack' as const }, { kind: 'drop' as const, why: 'x' }]) {
      const { writes, ctx } = harness();
      const d = new KafkaDelivery('orders', record(), ctx);
      await d.settle(decision);
      assert.equal(d.state, 'settled');
      assert.equal(writes.length, 0);
    }
  });

  it('a retry goes to tier min(attempts, tiers) with bq-attempts, bq-delay, bq-original-topic, the key and the edited body', async () => {
    const { writes, ctx } = harness();
    const d = new KafkaDelivery('orders', record(), ctx);
    await d.settle({ kind: 'retry', delayMs: 0, attempts: 2, rule: 'retry' });
    assert.equal(d.state, 'settled');
    const [w] = writes;
    assert.equal(w!.topic, 'orders.retry.2');
    assert.deepEqual(w!.key, Buffer.from([0x00, 0xff, 0x10]));
    assert.equal(w!.value!.toString(), BODY.replace('"attempts":0', '"attempts":2'), 'only attempts changes, big integers intact');
    assert.equal(w!.headers['bq-attempts'], '2');
    assert.equal(w!.headers['bq-delay'], '1000');
    assert.equal(w!.headers['bq-original-topic'], 'orders');
    assert.deepEqual(w!.headers.traceparent, record().headers!.traceparent, 'riders kept byte for byte');

    const again = harness();
    await new KafkaDelivery('orders', record(), again.ctx).settle({ kind: 'retry', delayMs: 0, attempts: 7, rule: 'retry' });
    assert.equal(again.writes[0]!.topic, 'orders.retry.2', 'the last tier repeats');
  });

  it('retry and delay pick a tier by two different rules (seed 000: do not merge them)', async () => {
    const tiers = [500, 2000, 10_000];
    const rows = [
      { what: 'retry: the tier of the attempt, whatever the delay', decision: { delayMs: 9000, attempts: 1, rule: 'retry' as const }, topic: 'orders.retry.1', delay: '500' },
      { what: 'retry: the last tier repeats', decision: { delayMs: 0, attempts: 9, rule: 'retry' as const }, topic: 'orders.retry.3', delay: '10000' },
      { what: 'delay: the smallest tier covering it, whatever the attempt', decision: { delayMs: 1500, attempts: 1, rule: 'delay' as const }, topic: 'orders.retry.2', delay: '2000' },
      { what: 'delay: a tier equal to the delay covers it', decision: { delayMs: 10_000, attempts: 2, rule: 'delay' as const }, topic: 'orders.retry.3', delay: '10000' },
      { what: 'delay: a short delay on a late attempt still takes tier 1', decision: { delayMs: 100, attempts: 3, rule: 'delay' as const }, topic: 'orders.retry.1', delay: '500' },
    ];
    for (const row of rows) {
      const { writes, ctx } = harness(tiers);
      await new KafkaDelivery('orders', record(), ctx).settle({ kind: 'retry', ...row.decision });
      assert.equal(writes[0]!.topic, row.topic, row.what);
      assert.equal(writes[0]!.headers['bq-delay'], row.delay, row.what);
      assert.equal(writes[0]!.headers['bq-attempts'], String(row.decision.attempts), row.what);
    }
  });

  it('a delay above the largest tier is refused: nothing is written and the record stays pending', async () => {
    const { writes, ctx } = harness([500, 1000]);
    const d = new KafkaDelivery('orders', record(), ctx);
    await assert.rejects(d.settle({ kind: 'retry', delayMs: 1001, attempts: 1, rule: 'delay' }), /exceeds the largest retry tier \(1000 ms\)/);
    assert.equal(writes.length, 0);
    assert.equal(d.state, 'pending');
  });

  it('a retry of poison (bounded retry without a DLQ) carries the bytes unchanged; the count rides bq-attempts', async () => {
    for (const raw of [Buffer.from([0xc3, 0x28, 0x7b]), b('{"no":"identity","attempts":0}'), b('[1,2]'), b('')]) {
      const { writes, ctx } = harness();
      await new KafkaDelivery('orders', record({ value: raw, key: null }), ctx).settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' });
      assert.deepEqual(writes[0]!.value, raw);
      assert.equal(writes[0]!.headers['bq-attempts'], '1');
      assert.equal(writes[0]!.key, null);
      assert.equal(writes[0]!.topic, 'orders.retry.1');
    }
    const nulled = harness();
    await new KafkaDelivery('orders', record({ value: null }), nulled.ctx).settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' });
    assert.equal(nulled.writes[0]!.value, null, 'a null value stays null');
  });

  it('a failed retry write leaves the record pending (not committed) and throws', async () => {
    const { ctx } = harness([500], true);
    const d = new KafkaDelivery('orders', record(), ctx);
    await assert.rejects(d.settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' }), /broker down/);
    assert.equal(d.state, 'pending');
  });

  it('a dead-letter writes the record with the key byte for byte; its headers project the record, riders kept', async () => {
    const failed = b(BODY.replace('"attempts":0', '"attempts":2').replace(/}$/, ',"dead_letter":{"reason":"failed"}}'));
    const cases = [
      {
        what: 'a failed record: the projection of its own bytes (counted attempts), not the delivered headers',
        record: failed,
        reason: 'failed' as const,
        headers: {
          'bq-attempts': '2', 'bq-job': 'urn:babel:orders:created', 'bq-message-id': 'm', 'bq-schema-version': '1',
          'bq-source-lang': 'php', 'bq-trace-id': 't', traceparent: TRACEPARENT,
        },
      },
      { what: 'a poison record claims no envelope field', record: b('{"x":1}'), reason: 'poison' as const, headers: { traceparent: TRACEPARENT } },
      {
        what: 'a version-gated record keeps the routing headers, less attempts and schema version',
        record: b(BODY),
        reason: 'version_gate' as const,
        headers: { 'bq-job': 'urn:babel:orders:created', traceparent: TRACEPARENT },
      },
    ];
    for (const c of cases) {
      for (const key of [null, Buffer.alloc(0), Buffer.from([1, 2, 3])]) {
        const { writes, ctx } = harness();
        const d = new KafkaDelivery('orders', record({ key }), ctx);
        await d.settle({ kind: 'dead-letter', queue: 'orders.dlq', record: c.record, reason: c.reason });
        assert.equal(d.state, 'settled');
        assert.equal(writes[0]!.topic, 'orders.dlq');
        assert.deepEqual(writes[0]!.key, key);
        assert.deepEqual(writes[0]!.value, c.record);
        const headers = Object.fromEntries(Object.entries(writes[0]!.headers).map(([k, v]) => [k, String(v)]));
        assert.deepEqual(headers, c.headers, c.what);
      }
    }
  });

  it('a null value stays null on a version-gated record (it is the raw value) and on a poison retry copy', async () => {
    const gated = harness();
    const nulled = record({ value: null, headers: { 'bq-schema-version': b('2') } });
    const d = new KafkaDelivery('orders', nulled, gated.ctx);
    await d.settle({ kind: 'dead-letter', queue: 'orders.dlq', record: d.body, reason: 'version_gate' });
    assert.equal(gated.writes[0]!.value, null);
    const retried = harness();
    await new KafkaDelivery('orders', record({ value: null }), retried.ctx).settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' });
    assert.equal(retried.writes[0]!.value, null);
    assert.equal(String(retried.writes[0]!.headers['bq-attempts']), '1');
  });

  it('a failed dead-letter write throws DeadLetterWriteError and leaves the record uncommitted', async () => {
    const { ctx } = harness([], true);
    const d = new KafkaDelivery('orders', record(), ctx);
    await assert.rejects(
      d.settle({ kind: 'dead-letter', queue: 'orders.dlq', record: b('{}'), reason: 'poison' }),
      (e: unknown) => e instanceof DeadLetterWriteError && e.queue === 'orders.dlq',
    );
    assert.equal(d.state, 'pending');
    await d.settle({ kind: 'unsettled', why: 'dead-letter write failed' });
    assert.equal(d.state, 'unsettled');
  });

  it('unsettled marks the record for redelivery; a retry without tiers and a native DLQ are refused', async () => {
    const d = new KafkaDelivery('orders', record(), harness([]).ctx);
    await d.settle({ kind: 'unsettled', why: 'no tiers' });
    assert.equal(d.state, 'unsettled');
    assert.equal(d.unsettledWhy, 'no tiers');
    const e = new KafkaDelivery('orders', record(), harness([]).ctx);
    await assert.rejects(e.settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' }), /needs retry tiers/);
    await assert.rejects(e.settle({ kind: 'native-dead-letter', why: 'x' }), /no native dead-letter/);
    assert.equal(e.state, 'pending');
  });

  it('poison on a topic without tiers (a DLQ topic on a tiered transport) is committed, dropped and logged, never written or blocking', async () => {
    const h = harness([]);
    const d = new KafkaDelivery('orders.dlq', record({ value: b('not json {') }), h.ctx);
    await d.settle({ kind: 'retry', delayMs: 0, attempts: 1, rule: 'retry' });
    assert.equal(d.state, 'settled');
    assert.deepEqual(h.writes, []);
    assert.ok(h.logger.lines.some((l) => l.message.startsWith('dropped')), 'the drop is logged');
    assert.doesNotMatch(h.logger.text(), /not json/, 'the body is never logged');
  });
});
