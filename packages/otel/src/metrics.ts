import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';

/** The instruments, created once per instrumentation. */
export interface Instruments {
  readonly sent: Counter;
  readonly consumed: Counter;
  readonly handled: Counter;
  readonly failed: Counter;
  readonly retried: Counter;
  readonly deadLettered: Counter;
  readonly dropped: Counter;
  readonly unsettled: Counter;
  readonly nativeDeadLettered: Counter;
  readonly deadLetterWriteFailures: Counter;
  readonly processDuration: Histogram;
  readonly inFlight: UpDownCounter;
}

/** Metric names: OTel's messaging conventions where they have one, `messaging.babelqueue.*` for the runtime's decisions. */
export const METRIC = {
  sent: 'messaging.client.sent.messages',
  consumed: 'messaging.client.consumed.messages',
  processDuration: 'messaging.process.duration',
  handled: 'messaging.babelqueue.messages.handled',
  failed: 'messaging.babelqueue.messages.failed',
  retried: 'messaging.babelqueue.messages.retried',
  deadLettered: 'messaging.babelqueue.messages.dead_lettered',
  dropped: 'messaging.babelqueue.messages.dropped',
  unsettled: 'messaging.babelqueue.messages.unsettled',
  nativeDeadLettered: 'messaging.babelqueue.messages.native_dead_lettered',
  inFlight: 'messaging.babelqueue.messages.in_flight',
  deadLetterWriteFailures: 'messaging.babelqueue.dead_letter.write_failures',
} as const;

export function createInstruments(meter: Meter): Instruments {
  const counter = (name: string, description: string): Counter => meter.createCounter(name, { description, unit: '{message}' });
  return {
    sent: counter(METRIC.sent, 'Messages published (failed publishes carry error.type)'),
    consumed: counter(METRIC.consumed, 'Deliveries taken from the broker'),
    handled: counter(METRIC.handled, 'Messages handled and acknowledged'),
    failed: counter(METRIC.failed, 'Handler failures (thrown, timed out), whatever happens next'),
    retried: counter(METRIC.retried, 'Deliveries settled by a retry'),
    deadLettered: counter(METRIC.deadLettered, 'Deliveries written to the dead-letter queue, by reason'),
    dropped: counter(METRIC.dropped, 'Deliveries acknowledged without a record, by reason'),
    unsettled: counter(METRIC.unsettled, 'Deliveries left unsettled for the broker to redeliver'),
    nativeDeadLettered: counter(METRIC.nativeDeadLettered, "Deliveries left to the broker's own dead-letter handling"),
    deadLetterWriteFailures: meter.createCounter(METRIC.deadLetterWriteFailures, {
      description: 'Dead-letter records the broker refused (the delivery was left for redelivery)',
      unit: '{record}',
    }),
    processDuration: meter.createHistogram(METRIC.processDuration, {
      description: 'How long the handler ran',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] },
    }),
    inFlight: meter.createUpDownCounter(METRIC.inFlight, { description: 'Deliveries being processed now', unit: '{message}' }),
  };
}

/** The attributes a metric point carries. */
export function metricAttributes(queue: string, extra: Attributes): Attributes {
  return { 'messaging.system': 'babelqueue', 'messaging.destination.name': queue, ...extra };
}
