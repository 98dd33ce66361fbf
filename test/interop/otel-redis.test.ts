// Trace interop with the Python SDK over real Redis, legacy layout: the
// traceparent rides the `__bq_frame` headers both ways.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { SpanKind } from '@opentelemetry/api';
import { RedisTransport } from '@babelqueue/redis';
import { createApp, silentLogger, type Message } from '@babelqueue/core';
import { otelInstrumentation, syntheticParentSpanId, uuidOfTraceId } from '@babelqueue/otel';
import { broker, uniqueQueue } from '../support/brokers.js';
import { otelLab } from '../support/otel.js';
import { describeOtelInterop } from './support/otel-scenarios.js';

const redisLab = broker('redis');

describeOtelInterop({
  name: 'redis',
  broker: redisLab,
  pythonCarriesHeaders: true,
  transport: (url) => new RedisTransport({ url, layout: 'legacy', logger: silentLogger }),
  async cleanup(url, queues) {
    const redis = new Redis(url);
    await redis.del(...queues.flatMap((q) => [q, `${q}:processing`, `${q}:processing:deadlines`]));
    await redis.quit();
  },
});

// The zset layout has no place for headers (the spec forbids a frame): the
// traceparent is dropped and the consumer continues the trace through trace_id.
describe('trace over the Redis zset layout: the trace_id fallback', { skip: redisLab.skip }, () => {
  const lab = otelLab();
  it('the consumer span joins the producer trace under the trace_id-derived parent', async () => {
    const queue = uniqueQueue('otel-zset');
    const app = createApp({
      transport: new RedisTransport({ url: redisLab.url!, layout: 'zset', logger: silentLogger }),
      queue,
      logger: silentLogger,
      instrumentation: otelInstrumentation({ tracerProvider: lab.tracerProvider, meterProvider: false }),
    });
    const handled: Message[] = [];
    app.handle('urn:babel:interop:traced', (_d, m) => void handled.push(m));
    try {
      const id = await app.publish('urn:babel:interop:traced', { n: 1 });
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      const span = (kind: SpanKind) => lab.spans().find((s) => s.kind === kind && s.attributes['messaging.message.id'] === id)!;
      const producer = span(SpanKind.PRODUCER);
      const consumer = span(SpanKind.CONSUMER);
      assert.equal(handled[0]!.headers.traceparent, undefined, 'no header travels on the zset layout');
      assert.equal(handled[0]!.traceId, uuidOfTraceId(producer.spanContext().traceId));
      assert.equal(consumer.spanContext().traceId, producer.spanContext().traceId);
      assert.equal(consumer.parentSpanContext?.spanId, syntheticParentSpanId(handled[0]!.traceId));
    } finally {
      await app.close();
      const redis = new Redis(redisLab.url!);
      await redis.del(`queues:${queue}`, `queues:${queue}:reserved`, `queues:${queue}:delayed`, `queues:${queue}:notify`);
      await redis.quit();
    }
  });
});
