import {
  context,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type {
  DeliveryEnd,
  DeliveryScope,
  DeliveryStart,
  Instrumentation,
  Message,
  PublishResult,
  PublishScope,
  PublishStart,
} from '@babelqueue/core';
import { ATTR, SYSTEM } from './attributes.js';
import { createInstruments, metricAttributes, type Instruments } from './metrics.js';
import { formatTraceparent, parseTraceparent, TRACEPARENT, TRACESTATE } from './traceparent.js';
import { otelTraceIdOf, syntheticParentSpanId, uuidOfTraceId } from './trace-ids.js';

/** Options of {@link otelInstrumentation}. */
export interface OtelOptions {
  /** Where spans go. Default the global provider (`trace.getTracerProvider()`). `false` turns tracing off. */
  readonly tracerProvider?: TracerProvider | false;
  /** Where metrics go. Default the global provider (`metrics.getMeterProvider()`). `false` turns metrics off. */
  readonly meterProvider?: MeterProvider | false;
}

const SCOPE_NAME = '@babelqueue/otel';
const SCOPE_VERSION = '0.1.0';

/**
 * OpenTelemetry for an App: pass it as `createApp({ instrumentation })`.
 *
 * Tracing: each publish is a PRODUCER span `publish <urn>` whose context rides
 * as `traceparent`/`tracestate` in the binding's native metadata, and whose
 * trace id is stamped as the envelope's `trace_id` (UUID form) unless the
 * caller named one; each handled message is a CONSUMER span `process <urn>`,
 * the child of the arriving `traceparent`, else of a synthetic parent derived
 * from `trace_id` — the same trace the other SDKs derive. The handler runs with
 * that span current, so its own spans nest under it.
 *
 * Metrics: deliveries consumed, handled, failed, retried, dead-lettered,
 * dropped, left unsettled or to the broker's dead-lettering (by queue, URN,
 * reason), dead-letter write failures, the handler duration histogram and the
 * in-flight gauge — all from the runtime's settled decisions.
 *
 * @example
 * ```ts
 * const app = createApp({ transport, queue: 'orders', instrumentation: otelInstrumentation() });
 * ```
 */
export function otelInstrumentation(options: OtelOptions = {}): Instrumentation {
  const tracer = options.tracerProvider === false
    ? undefined
    : (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE_NAME, SCOPE_VERSION);
  const instruments = options.meterProvider === false
    ? undefined
    : createInstruments((options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE_NAME, SCOPE_VERSION));
  if (tracer === undefined && instruments === undefined) return {};
  return {
    publish: (start) => publishScope(start, tracer, instruments),
    delivery: (start) => new DeliveryProbe(start, tracer, instruments),
  };
}

function publishScope(start: PublishStart, tracer: Tracer | undefined, instruments: Instruments | undefined): PublishScope {
  let span: Span | undefined;
  let riders: { traceId?: string; headers?: Record<string, string> } = {};
  if (tracer !== undefined) {
    span = tracer.startSpan(
      `publish ${start.urn}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: { [ATTR.system]: SYSTEM, [ATTR.operation]: 'publish', [ATTR.destination]: start.urn },
      },
      producerParent(start.traceId),
    );
    const spanContext = span.spanContext();
    if (trace.isSpanContextValid(spanContext)) {
      const headers: Record<string, string> = { [TRACEPARENT]: formatTraceparent(spanContext) };
      const state = spanContext.traceState?.serialize();
      if (state) headers[TRACESTATE] = state;
      riders = { traceId: uuidOfTraceId(spanContext.traceId), headers };
    }
  }
  return {
    ...riders,
    end(result: PublishResult) {
      if (span !== undefined) {
        if (result.envelope !== undefined) {
          span.setAttribute(ATTR.messageId, result.envelope.meta.id);
          span.setAttribute(ATTR.conversationId, result.envelope.trace_id);
        }
        if (result.error !== undefined) failSpan(span, result.error);
        span.end();
      }
      instruments?.sent.add(1, metricAttributes(start.queue, {
        [ATTR.operationName]: 'publish',
        [ATTR.urn]: start.urn,
        ...(result.error !== undefined ? { [ATTR.errorType]: errorType(result.error) } : {}),
      }));
    },
  };
}

/**
 * The active context; but a publish that continues a `trace_id` from outside
 * any span hangs under the trace_id-derived parent, so it joins that trace.
 */
function producerParent(traceId: string | undefined): Context {
  const active = context.active();
  const current = trace.getSpanContext(active);
  if (traceId === undefined || (current !== undefined && trace.isSpanContextValid(current))) return active;
  return syntheticParent(active, traceId);
}

function syntheticParent(base: Context, traceId: string): Context {
  return trace.setSpanContext(base, {
    traceId: otelTraceIdOf(traceId),
    spanId: syntheticParentSpanId(traceId),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
}

/** One delivery: the in-flight gauge from start to settlement, and the consumer span around the handler. */
class DeliveryProbe implements DeliveryScope {
  private span: Span | undefined;

  constructor(
    private readonly start: DeliveryStart,
    private readonly tracer: Tracer | undefined,
    private readonly instruments: Instruments | undefined,
  ) {
    instruments?.consumed.add(1, metricAttributes(start.queue, { [ATTR.operationName]: 'process' }));
    instruments?.inFlight.add(1, metricAttributes(start.queue, {}));
  }

  async handle<T>(message: Message, invoke: () => Promise<T>): Promise<T> {
    const began = performance.now();
    let result: T;
    if (this.tracer === undefined) {
      result = await invoke();
    } else {
      const parent = consumerParent(message);
      this.span = this.tracer.startSpan(`process ${message.urn}`, { kind: SpanKind.CONSUMER, attributes: processAttributes(message) }, parent);
      result = await context.with(trace.setSpan(parent, this.span), invoke);
    }
    this.instruments?.processDuration.record((performance.now() - began) / 1000, metricAttributes(this.start.queue, {
      [ATTR.operationName]: 'process',
      [ATTR.urn]: message.urn,
    }));
    return result;
  }

  settled(end: DeliveryEnd): void {
    if (this.span !== undefined) {
      this.span.setAttribute(ATTR.decision, end.decision);
      if (end.outcome === 'failed') failSpan(this.span, end.error);
      this.span.end();
    }
    const instruments = this.instruments;
    if (instruments === undefined) return;
    instruments.inFlight.add(-1, metricAttributes(this.start.queue, {}));
    // The URN only of a routed message: an unknown one is arbitrary input, not a bounded label.
    const urn = end.message !== undefined && end.outcome !== 'unknown-urn' ? { [ATTR.urn]: end.message.urn } : {};
    const attributes = metricAttributes(end.queue, urn);
    const withReason = (): Attributes => ({ ...attributes, [ATTR.reason]: end.reason ?? end.outcome });
    if (end.outcome === 'failed') instruments.failed.add(1, { ...attributes, [ATTR.errorType]: errorType(end.error) });
    if (end.deadLetterWriteFailed === true) instruments.deadLetterWriteFailures.add(1, withReason());
    switch (end.decision) {
      case 'ack':
        if (end.outcome === 'handled') instruments.handled.add(1, attributes);
        return;
      case 'retry':
        instruments.retried.add(1, { ...attributes, [ATTR.outcome]: end.outcome });
        return;
      case 'dead-letter':
        instruments.deadLettered.add(1, withReason());
        return;
      case 'drop':
        instruments.dropped.add(1, withReason());
        return;
      case 'unsettled':
        instruments.unsettled.add(1, { ...attributes, [ATTR.outcome]: end.outcome });
        return;
      case 'native-dead-letter':
        instruments.nativeDeadLettered.add(1, { ...attributes, [ATTR.outcome]: end.outcome });
        return;
    }
  }
}

/** The arriving `traceparent` when valid, else the parent every SDK derives from `trace_id`. */
function consumerParent(message: Message): Context {
  const base = context.active();
  const remote = parseTraceparent(message.headers[TRACEPARENT], message.headers[TRACESTATE]);
  if (remote !== undefined) return trace.setSpanContext(base, remote);
  return message.traceId === '' ? base : syntheticParent(base, message.traceId);
}

function processAttributes(message: Message): Attributes {
  const meta = message.envelope.meta;
  return {
    [ATTR.system]: SYSTEM,
    [ATTR.operation]: 'process',
    [ATTR.destination]: typeof meta.queue === 'string' ? meta.queue : '',
    [ATTR.messageId]: message.id,
    [ATTR.conversationId]: message.traceId,
    // The body's attempts member, as the other SDKs report it (0 on a first delivery).
    [ATTR.attempts]: typeof message.envelope.attempts === 'number' ? message.envelope.attempts : 0,
  };
}

function failSpan(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

function errorType(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
