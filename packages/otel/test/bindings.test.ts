// The producer → consumer span link through each binding's own native metadata
// on its real broker: the instrumentation only hands riders to
// PublishOptions.headers and reads Message.headers, so every binding that
// carries headers carries the traceparent. (SQS: a row here once its binding lands.)
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { createApp, silentLogger, type Message, type Transport } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { KafkaTransport } from '@babelqueue/kafka';
import { otelInstrumentation } from '@babelqueue/otel';
import { PulsarTransport } from '@babelqueue/pulsar';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { RedisTransport } from '@babelqueue/redis';
import { configureQueue } from '../../azure-service-bus/test/support/lab.js';
import { broker, uniqueQueue, type BrokerName } from '../../../test/support/brokers.js';
import { otelLab } from '../../../test/support/otel.js';

const lab = otelLab();
const URN = 'urn:babel:orders:traced';

interface Row {
  readonly name: string;
  readonly broker: BrokerName;
  transport(url: string, queue: string): Transport;
  prepare?(url: string, queue: string): Promise<void>;
  readonly waitMs?: number;
}

const ROWS: Row[] = [
  { name: 'Redis legacy (__bq_frame headers)', broker: 'redis', transport: (url) => new RedisTransport({ url, layout: 'legacy', logger: silentLogger }) },
  { name: 'RabbitMQ (AMQP headers)', broker: 'rabbitmq', transport: (url) => new RabbitMqTransport({ url, logger: silentLogger }) },
  {
    name: 'Kafka (record headers)',
    broker: 'kafka',
    transport: (url, topic) => new KafkaTransport({ url, groupId: `${topic}.g`, logger: silentLogger }),
    waitMs: 20_000,
  },
  { name: 'Pulsar (message properties)', broker: 'pulsar', transport: (url) => new PulsarTransport({ url, logger: silentLogger }), waitMs: 20_000 },
  { name: 'Artemis (AMQP 1.0 application properties)', broker: 'artemis', transport: (url) => new ArtemisTransport({ url, logger: silentLogger }) },
  {
    name: 'Azure Service Bus (application properties, stand-in)',
    broker: 'asb',
    transport: (url) => new AzureServiceBusTransport({ connectionString: url, logger: silentLogger }),
    prepare: (url, queue) => configureQueue(url, queue),
  },
];

for (const row of ROWS) {
  const lab$ = broker(row.broker);
  describe(`traceparent through ${row.name}`, { skip: lab$.skip }, () => {
    const closers: (() => Promise<void>)[] = [];
    after(async () => {
      for (const close of closers) await close();
    });

    it('the consumer span is the child of the producer span', async () => {
      const queue = uniqueQueue('otel-binding');
      await row.prepare?.(lab$.url!, queue);
      const app = createApp({
        transport: row.transport(lab$.url!, queue),
        queue,
        logger: silentLogger,
        instrumentation: otelInstrumentation({ tracerProvider: lab.tracerProvider, meterProvider: false }),
      });
      closers.push(() => app.close());
      const handled: Message[] = [];
      app.handle(URN, (_d, m) => void handled.push(m));
      const id = await app.publish(URN, { n: 1 }, { headers: { tracestate: 'vendor=1' } });
      assert.equal(await app.consume({ maxMessages: 1, idleMs: row.waitMs ?? 5000 }), 1);
      const span = (kind: SpanKind) => lab.spans().find((s) => s.kind === kind && s.attributes['messaging.message.id'] === id)!;
      const producer = span(SpanKind.PRODUCER).spanContext();
      const consumer = span(SpanKind.CONSUMER);
      assert.equal(handled[0]!.headers.traceparent, `00-${producer.traceId}-${producer.spanId}-01`);
      assert.equal(handled[0]!.headers.tracestate, 'vendor=1', "the caller's own rider travels beside it");
      assert.equal(consumer.spanContext().traceId, producer.traceId);
      assert.equal(consumer.parentSpanContext?.spanId, producer.spanId);
      assert.equal(consumer.parentSpanContext?.traceState?.get('vendor'), '1', 'tracestate is extracted with it');
    });
  });
}
