import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { createApp, EnvelopeCodec, InMemoryTransport, silentLogger, type AppOptions } from '@babelqueue/core';
import {
  formatTraceparent,
  METRIC,
  otelInstrumentation,
  otelTraceIdOf,
  parseTraceparent,
  syntheticParentSpanId,
  uuidOfTraceId,
} from '@babelqueue/otel';
import { otelLab } from '../../../test/support/otel.js';

const URN = 'urn:babel:orders:created';
const lab = otelLab();

function setup(options: Partial<AppOptions> = {}) {
  const transport = (options.transport as InMemoryTransport | undefined) ?? new InMemoryTransport({ redeliveryDelayMs: 0 });
  const app = createApp({
    queue: 'orders',
    logger: silentLogger,
    ...options,
    transport,
    instrumentation: otelInstrumentation({ tracerProvider: lab.tracerProvider, meterProvider: lab.meterProvider }),
  });
  return { app, transport };
}

const byName = (name: string) => lab.spans().filter((s) => s.name === name);

describe('trace id mapping (the same in every SDK)', () => {
  test('a UUID maps to its 32 hex digits, lowercased; the UUID form is the inverse', () => {
    assert.equal(otelTraceIdOf('4BF92F35-77B3-4DA6-A3CE-929D0E0E4736'), '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(otelTraceIdOf('4bf92f3577b34da6a3ce929d0e0e4736'), '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(uuidOfTraceId('4bf92f3577b34da6a3ce929d0e0e4736'), '4bf92f35-77b3-4da6-a3ce-929d0e0e4736');
  });

  test('anything else (and the all-zero UUID) maps to the first 32 hex of SHA-256(trace_id)', () => {
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    assert.equal(otelTraceIdOf('order-1042'), sha('order-1042').slice(0, 32));
    assert.equal(otelTraceIdOf('zoë'), sha('zoë').slice(0, 32));
    const zero = '00000000-0000-0000-0000-000000000000';
    assert.equal(otelTraceIdOf(zero), sha(zero).slice(0, 32));
    assert.equal(syntheticParentSpanId('order-1042'), sha('babelqueue-span:order-1042').slice(0, 16));
  });

  test('traceparent: W3C shape in and out; all-zero ids, version ff and junk are refused', () => {
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const parsed = parseTraceparent(tp, 'vendor=value');
    assert.equal(parsed?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(parsed?.spanId, '00f067aa0ba902b7');
    assert.equal(parsed?.traceFlags, 1);
    assert.equal(parsed?.traceState?.get('vendor'), 'value');
    assert.equal(formatTraceparent(parsed!), tp);
    for (const bad of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      'nonsense', 42, undefined,
    ]) {
      assert.equal(parseTraceparent(bad), undefined, String(bad));
    }
    assert.equal(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03-future')?.traceFlags, 1);
  });
});

describe('spans around publish and process', () => {
  test('publish → process: PRODUCER span, traceparent rider, trace_id stamped; CONSUMER span is its child; handler spans nest', async () => {
    lab.reset();
    const { app, transport } = setup();
    const tracer = lab.tracerProvider.getTracer('handler');
    app.handle(URN, () => tracer.startSpan('charge card').end());
    const id = await app.publish(URN, { order_id: 1042 });

    const [producer] = byName(`publish ${URN}`);
    assert.ok(producer, 'a producer span');
    assert.equal(producer.kind, SpanKind.PRODUCER);
    assert.deepEqual(producer.attributes, {
      'messaging.system': 'babelqueue',
      'messaging.operation': 'publish',
      'messaging.destination.name': URN,
      'messaging.message.id': id,
      'messaging.message.conversation_id': uuidOfTraceId(producer.spanContext().traceId),
    });
    const [stored] = transport.broker.ready('orders');
    assert.equal(stored!.headers.traceparent, `00-${producer.spanContext().traceId}-${producer.spanContext().spanId}-01`);
    assert.equal(EnvelopeCodec.decode(stored!.body.toString()).trace_id, uuidOfTraceId(producer.spanContext().traceId));

    await app.consume({ idleMs: 30 });
    const [consumer] = byName(`process ${URN}`);
    assert.ok(consumer, 'a consumer span');
    assert.equal(consumer.kind, SpanKind.CONSUMER);
    assert.equal(consumer.spanContext().traceId, producer.spanContext().traceId);
    assert.equal(consumer.parentSpanContext?.spanId, producer.spanContext().spanId);
    assert.equal(consumer.parentSpanContext?.isRemote, true);
    assert.deepEqual(consumer.attributes, {
      'messaging.system': 'babelqueue',
      'messaging.operation': 'process',
      'messaging.destination.name': 'orders',
      'messaging.message.id': id,
      'messaging.message.conversation_id': uuidOfTraceId(producer.spanContext().traceId),
      'messaging.babelqueue.attempts': 0,
      'messaging.babelqueue.decision': 'ack',
    });
    const [inner] = byName('charge card');
    assert.equal(inner!.parentSpanContext?.spanId, consumer.spanContext().spanId, 'the handler ran with the consumer span current');
  });

  test('inside an active span the producer span is its child; a caller traceId is kept as the body trace_id', async () => {
    lab.reset();
    const { app, transport } = setup();
    const outer = lab.tracerProvider.getTracer('t').startSpan('http request');
    await context.with(trace.setSpan(context.active(), outer), () => app.publish(URN, { n: 1 }, { traceId: 'caller-chosen' }));
    outer.end();
    const [producer] = byName(`publish ${URN}`);
    assert.equal(producer!.parentSpanContext?.spanId, outer.spanContext().spanId);
    assert.equal(EnvelopeCodec.decode(transport.broker.ready('orders')[0]!.body.toString()).trace_id, 'caller-chosen');
  });

  test('a caller traceId outside any span: the producer span joins the trace derived from it', async () => {
    lab.reset();
    const { app } = setup();
    await app.publish(URN, { n: 1 }, { traceId: 'order-1042' });
    const [producer] = byName(`publish ${URN}`);
    assert.equal(producer!.spanContext().traceId, otelTraceIdOf('order-1042'));
    assert.equal(producer!.parentSpanContext?.spanId, syntheticParentSpanId('order-1042'));
  });

  test('no traceparent (or an invalid one): the consumer span hangs under the trace_id-derived parent', async () => {
    lab.reset();
    const { app, transport } = setup();
    app.handle(URN, () => {});
    const uuid = '0af76519-16cd-43dd-8448-eb211c80319c';
    const body = (traceId: string) => Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { n: 1 }, { queue: 'orders', traceId })));
    await transport.publishRaw('orders', body(uuid));
    await transport.publishRaw('orders', body('not-a-uuid'), { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' });
    await app.consume({ idleMs: 30 });
    const [first, second] = byName(`process ${URN}`);
    assert.equal(first!.spanContext().traceId, '0af7651916cd43dd8448eb211c80319c');
    assert.equal(first!.parentSpanContext?.spanId, syntheticParentSpanId(uuid));
    assert.equal(second!.spanContext().traceId, otelTraceIdOf('not-a-uuid'));
    assert.equal(second!.parentSpanContext?.spanId, syntheticParentSpanId('not-a-uuid'));
  });

  test('a failing handler: the span has ERROR status, the exception and the decision (retry, then dead-letter)', async () => {
    lab.reset();
    const { app } = setup({ maxAttempts: 2, deadLetter: true });
    app.handle(URN, () => {
      throw new TypeError('card declined');
    });
    await app.publish(URN, { n: 1 });
    await app.consume({ idleMs: 50 });
    const spans = byName(`process ${URN}`);
    assert.deepEqual(spans.map((s) => s.attributes['messaging.babelqueue.decision']), ['retry', 'dead-letter']);
    assert.deepEqual(spans.map((s) => s.attributes['messaging.babelqueue.attempts']), [0, 1]);
    for (const s of spans) {
      assert.equal(s.status.code, SpanStatusCode.ERROR);
      assert.equal(s.events[0]?.name, 'exception');
    }
  });
});

describe('metrics from the runtime decisions', () => {
  test('handled, failed, retried, dead-lettered, dropped, DLQ write failures, duration and in-flight', async () => {
    let refuseDlq = false;
    const transport = new InMemoryTransport({
      redeliveryDelayMs: 0,
      beforeWrite: (queue) => {
        if (refuseDlq && queue === 'm.dlq') throw new Error('dlq down');
      },
    });
    const { app } = setup({ transport, queue: 'm', maxAttempts: 2, deadLetter: true });
    app.handle(URN, (data: { fail?: boolean }) => {
      if (data.fail) throw new RangeError('boom');
    });
    await app.publish(URN, { ok: 1 });
    await app.publish(URN, { fail: true }); // retried, then dead-lettered (failed)
    await transport.publishRaw('m', Buffer.from('{not json')); // dead-lettered (poison)
    await app.consume({ idleMs: 50 });

    const q = { 'messaging.destination.name': 'm' };
    const routed = { ...q, 'messaging.babelqueue.urn': URN };
    assert.equal(await lab.sum(METRIC.sent, routed), 2);
    assert.equal(await lab.sum(METRIC.consumed, q), 4);
    assert.equal(await lab.sum(METRIC.handled, routed), 1);
    assert.equal(await lab.sum(METRIC.failed, { ...routed, 'error.type': 'RangeError' }), 2);
    assert.equal(await lab.sum(METRIC.retried, routed), 1);
    assert.equal(await lab.sum(METRIC.deadLettered, { ...routed, 'messaging.babelqueue.reason': 'failed' }), 1);
    assert.equal(await lab.sum(METRIC.deadLettered, { ...q, 'messaging.babelqueue.reason': 'poison' }), 1);
    assert.equal(await lab.sum(METRIC.processDuration, routed), 3, 'one duration per handler run');
    assert.equal(await lab.sum(METRIC.inFlight, q), 0, 'every delivery that started was settled');

    refuseDlq = true;
    await transport.publishRaw('m', Buffer.from('{still not json'));
    await app.consume({ maxMessages: 1, idleMs: 50 });
    assert.equal(await lab.sum(METRIC.deadLetterWriteFailures, { ...q, 'messaging.babelqueue.reason': 'poison' }), 1);
    assert.equal(await lab.sum(METRIC.unsettled, { ...q, 'messaging.babelqueue.outcome': 'poison' }), 1);
  });

  test('drops by reason; an unknown URN is not a metric label', async () => {
    const { app, transport } = setup({ queue: 'd', onUnknownUrn: 'delete' });
    await app.publish('urn:babel:nobody:home', { n: 1 });
    await transport.publishRaw('d', Buffer.from('[]'));
    await app.consume({ idleMs: 30 });
    const dropped = await lab.points(METRIC.dropped);
    const reasons = dropped.filter((p) => p.attributes['messaging.destination.name'] === 'd').map((p) => p.attributes['messaging.babelqueue.reason']).sort();
    assert.deepEqual(reasons, ['poison', 'unknown_urn']);
    assert.ok(dropped.every((p) => p.attributes['messaging.babelqueue.urn'] === undefined), 'no URN label on drops of unknown URNs or poison');
  });

  test('tracing and metrics can each be turned off; both off is an empty instrumentation', () => {
    assert.deepEqual(otelInstrumentation({ tracerProvider: false, meterProvider: false }), {});
  });
});
