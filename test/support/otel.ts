/**
 * OpenTelemetry SDK wiring for tests: an AsyncLocalStorage context manager,
 * spans kept in memory, and metrics read on demand — no collector, no exporter
 * process. One call per test file (the context manager is process-global).
 */
import { context, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export interface OtelLab {
  tracerProvider: BasicTracerProvider;
  meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  reset(): void;
  /** Every point of metric `name`, with its attributes and value (a histogram's value is its count). */
  points(name: string): Promise<{ attributes: Attributes; value: number }[]>;
  /** The sum of the points of `name` whose attributes include `match`. */
  sum(name: string, match?: Attributes): Promise<number>;
}

let contextManager: AsyncLocalStorageContextManager | undefined;

export function otelLab(): OtelLab {
  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const points = async (name: string) => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .filter((m) => m.descriptor.name === name)
      .flatMap((m) => (m.dataPoints as DataPoint<number | Histogram>[]).map((p) => ({
        attributes: p.attributes,
        value: typeof p.value === 'number' ? p.value : p.value.count,
      })));
  };
  return {
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    points,
    async sum(name, match = {}) {
      return (await points(name))
        .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
        .reduce((total, p) => total + p.value, 0);
    },
  };
}
