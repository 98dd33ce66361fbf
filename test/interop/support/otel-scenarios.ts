/**
 * Trace interop with the Python SDK's OpenTelemetry helper (babelqueue.otel,
 * under the Python OTel SDK's in-memory exporter) on one real broker: a Python
 * producer span parents our consumer span and ours parents a Python consumer
 * span (through `traceparent` where the Python transport carries headers, else
 * through `trace_id`), both sides derive the same trace from a bare `trace_id`,
 * and our own producer → consumer link survives the broker's native metadata.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind } from '@opentelemetry/api';
import { createApp, silentLogger, type App, type Message, type Transport } from '@babelqueue/core';
import { otelInstrumentation, otelTraceIdOf, syntheticParentSpanId, uuidOfTraceId } from '@babelqueue/otel';
import { uniqueQueue, type BrokerSuite } from '../../support/brokers.js';
import { otelLab } from '../../support/otel.js';
import { pythonPeer } from './python-peer.js';

export interface OtelInteropTarget {
  readonly name: string;
  readonly broker: BrokerSuite;
  transport(url: string, queue: string): Transport;
  cleanup?(url: string, queues: string[]): Promise<void>;
  peerConsumeArgs?(queue: string): string[];
  readonly waitMs?: number;
  /**
   * The Python SDK's transport publishes and surfaces out-of-band headers here
   * (its HeaderPublisher). Without it the link is the trace_id fallback.
   */
  readonly pythonCarriesHeaders: boolean;
}

const URN = 'urn:babel:interop:traced';
const DATA = { order_id: 1042, customer: 'Zoë' };
const lab = otelLab();

export function describeOtelInterop(target: OtelInteropTarget): void {
  const peer = pythonPeer(`otel over ${target.name} (Python SDK)`);
  const skip = target.broker.skip || peer.skip;

  describe(`trace interop over ${target.name}: Python babelqueue.otel <-> @babelqueue/otel`, { skip }, () => {
    const url = target.broker.url!;
    const queues: string[] = [];
    const apps: App[] = [];
    after(async () => {
      for (const app of apps) await app.close();
      await target.cleanup?.(url, queues);
    });
    const queue = (): string => {
      const q = uniqueQueue(`otel-${target.name}`);
      queues.push(q, `${q}.dlq`);
      return q;
    };
    const waitMs = target.waitMs ?? 5000;

    function tsApp(q: string, traced = true): { app: App; handled: Message[] } {
      const app = createApp({
        transport: target.transport(url, q),
        queue: q,
        logger: silentLogger,
        ...(traced ? { instrumentation: otelInstrumentation({ tracerProvider: lab.tracerProvider, meterProvider: false }) } : {}),
      });
      apps.push(app);
      const handled: Message[] = [];
      app.handle(URN, (_data, message) => void handled.push(message));
      return { app, handled };
    }
    const ourSpan = (kind: SpanKind, messageId: string) =>
      lab.spans().find((s) => s.kind === kind && s.attributes['messaging.message.id'] === messageId);
    const pyConsume = (q: string) =>
      peer.run(['otel-consume', '--url', url, '--queue', q, '--urn', URN, '--max', '1', '--timeout', String(waitMs / 1000), ...(target.peerConsumeArgs?.(q) ?? [])]);

    it('a Python producer span is the parent of our consumer span', async () => {
      const q = queue();
      const py = await peer.run(['otel-publish', '--url', url, '--queue', q, '--urn', URN, '--data', JSON.stringify(DATA)]);
      const producer = py.spans.find((s: any) => s.kind === 'PRODUCER');
      assert.equal(producer.name, `publish ${URN}`);
      const ts = tsApp(q);
      assert.equal(await ts.app.consume({ maxMessages: 1, idleMs: waitMs }), 1);
      const [m] = ts.handled;
      assert.equal(m!.traceId, uuidOfTraceId(producer.trace_id), 'Python stamps trace_id = its span trace id');
      const consumer = ourSpan(SpanKind.CONSUMER, py.id)!;
      assert.ok(consumer, 'our consumer span');
      assert.equal(consumer.name, `process ${URN}`);
      assert.equal(consumer.spanContext().traceId, producer.trace_id, 'same trace');
      if (target.pythonCarriesHeaders) {
        assert.equal(m!.headers.traceparent, py.sent.headers.traceparent, 'the traceparent arrived in native metadata');
        assert.equal(consumer.parentSpanContext?.spanId, producer.span_id, 'the Python producer span is the parent');
      } else {
        assert.equal(m!.headers.traceparent, undefined);
        assert.equal(consumer.parentSpanContext?.spanId, syntheticParentSpanId(m!.traceId), 'trace_id fallback');
      }
      assert.deepEqual({ ...consumer.attributes, 'messaging.babelqueue.decision': undefined }, {
        'messaging.system': 'babelqueue',
        'messaging.operation': 'process',
        'messaging.destination.name': q,
        'messaging.message.id': py.id,
        'messaging.message.conversation_id': m!.traceId,
        'messaging.babelqueue.attempts': 0,
        'messaging.babelqueue.decision': undefined,
      });
    });

    it('our producer span is the parent of a Python consumer span, with the same attributes ours would carry', async () => {
      const q = queue();
      const ts = tsApp(q);
      const id = await ts.app.publish(URN, DATA);
      const producer = ourSpan(SpanKind.PRODUCER, id)!;
      const got = await pyConsume(q);
      assert.equal(got.processed, 1);
      const consumer = got.spans.find((s: any) => s.kind === 'CONSUMER');
      assert.equal(consumer.name, `process ${URN}`);
      assert.equal(consumer.trace_id, producer.spanContext().traceId, 'same trace');
      const traceId = uuidOfTraceId(producer.spanContext().traceId);
      if (target.pythonCarriesHeaders) {
        assert.equal(got.received[0].headers.traceparent, `00-${producer.spanContext().traceId}-${producer.spanContext().spanId}-01`);
        assert.equal(consumer.parent_span_id, producer.spanContext().spanId, 'our producer span is the parent');
      } else {
        assert.equal(consumer.parent_span_id, syntheticParentSpanId(traceId), 'trace_id fallback: both SDKs derive the same parent');
      }
      assert.equal(consumer.parent_remote, true);
      assert.deepEqual(consumer.attributes, {
        'messaging.system': 'babelqueue',
        'messaging.operation': 'process',
        'messaging.destination.name': q,
        'messaging.message.id': id,
        'messaging.message.conversation_id': traceId,
        'messaging.babelqueue.attempts': 0,
      });
    });

    it('with no traceparent, both sides derive the same trace and parent from trace_id (UUID or not)', async () => {
      // Python → TypeScript: a plain SDK publish (no OTel on the producer side).
      const q1 = queue();
      const fromPython = `py-order-${Date.now()}`;
      await peer.run(['publish', '--url', url, '--queue', q1, '--urn', URN, '--data', JSON.stringify(DATA), '--trace-id', fromPython]);
      const ts = tsApp(q1);
      assert.equal(await ts.app.consume({ maxMessages: 1, idleMs: waitMs }), 1);
      const ours = ourSpan(SpanKind.CONSUMER, ts.handled[0]!.id)!;
      assert.equal(ours.spanContext().traceId, otelTraceIdOf(fromPython));
      assert.equal(ours.parentSpanContext?.spanId, syntheticParentSpanId(fromPython));

      // TypeScript → Python: a plain publish from an App without OTel.
      for (const traceId of [`ts-order-${Date.now()}`, 'C0FFEE00-1234-4ABC-8DEF-0123456789AB']) {
        const q2 = queue();
        await tsApp(q2, false).app.publish(URN, DATA, { traceId });
        const got = await pyConsume(q2);
        const theirs = got.spans.find((s: any) => s.kind === 'CONSUMER');
        assert.equal(theirs.trace_id, otelTraceIdOf(traceId), traceId);
        assert.equal(theirs.parent_span_id, syntheticParentSpanId(traceId), traceId);
      }
    });

    it('our own producer → consumer link over this broker', async () => {
      const q = queue();
      const ts = tsApp(q);
      const id = await ts.app.publish(URN, DATA);
      assert.equal(await ts.app.consume({ maxMessages: 1, idleMs: waitMs }), 1);
      const producer = ourSpan(SpanKind.PRODUCER, id)!;
      const consumer = ourSpan(SpanKind.CONSUMER, id)!;
      assert.equal(ts.handled[0]!.headers.traceparent, `00-${producer.spanContext().traceId}-${producer.spanContext().spanId}-01`);
      assert.equal(consumer.spanContext().traceId, producer.spanContext().traceId);
      assert.equal(consumer.parentSpanContext?.spanId, producer.spanContext().spanId);
    });
  });
}
