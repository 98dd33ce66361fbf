/**
 * App overhead on the in-memory transport: messages/s through createApp with a
 * no-op handler (gate, decode, validate, route, settle), through `consume()`
 * and through `run()`, beside a bare loop over the same transport that only
 * acknowledges, and one that also checks UTF-8 and JSON.parses each body, in
 * the same run, in alternating rounds after one warm-up round of each (medians
 * count: the machine is shared); then the same App with @babelqueue/otel (a
 * consumer span per message through the OTel SDK with an AsyncLocalStorage
 * context, exported to a discarding exporter, plus the metrics) beside the
 * bare loop making the same telemetry by hand with the OTel API. Each with its
 * CPU time per message. Prints a Report (bench/support/report.ts): the App
 * beside each loop as a measurement ("raw" is the loop), the OTel rounds beside
 * the App's, and in `reference` the CPU differences taken round by round.
 *
 *   node --conditions=source --import tsx bench/runtime/index.ts [messages] [concurrency] [rounds]
 */
import { context, SpanKind, trace, TraceFlags, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { isUtf8 } from 'node:buffer';
import { createApp, EnvelopeCodec, InMemoryTransport, silentLogger, type OutgoingMessage } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { otelInstrumentation } from '@babelqueue/otel';
import { median, round, timed, type Sample } from '../support/measure.js';
import { printReport, throughputMeasurement, throughputOf } from '../support/report.js';

const N = Number(process.argv[2] ?? 50_000);
const CONCURRENCY = Number(process.argv[3] ?? 1);
const ROUNDS = Number(process.argv[4] ?? 7);
const OTEL_ROUNDS = 3;
const URN = 'urn:babel:orders:created';

function message(i: number): OutgoingMessage {
  const env = EnvelopeCodec.make(URN, { order_id: i, sku: 'ABC-123', qty: 2, note: 'café ☕' }, { queue: 'bench' });
  return {
    body: Buffer.from(EnvelopeCodec.encode(env)),
    queue: 'bench',
    projection: {
      urn: env.job, traceId: env.trace_id, messageId: env.meta.id, schemaVersion: 1,
      lang: env.meta.lang, createdAt: env.meta.created_at, attempts: env.attempts,
    },
  };
}

async function fill(transport: InMemoryTransport, messages: OutgoingMessage[]) {
  for (const m of messages) await transport.publish(m);
}

// The OTel SDK as an application would run it: spans finished and handed to an
// exporter (which discards them here), metrics aggregated for a reader. The
// context manager is only installed for the OTel rounds (it costs every promise).
const discard: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
class Reader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(discard)] });
const meterProvider = new MeterProvider({ readers: [new Reader()] });
const instrumentation = otelInstrumentation({ tracerProvider, meterProvider });

/**
 * The same telemetry as @babelqueue/otel records for a handled message, made
 * by hand with the OTel API (what the instrumentation's cost is measured
 * against, issue #33): the consumed counter and the in-flight gauge, a
 * CONSUMER span with the same name, attributes and parent (derived from
 * `trace_id`), the handler run with it current, the duration histogram, the
 * decision attribute, the span's end, the gauge back and the handled counter.
 */
function rawOtelRecorder() {
  const tracer = tracerProvider.getTracer('raw', '1');
  const meter = meterProvider.getMeter('raw', '1');
  const consumed = meter.createCounter('consumed');
  const handled = meter.createCounter('handled');
  const inFlight = meter.createUpDownCounter('in_flight');
  const duration = meter.createHistogram('duration', { unit: 's' });
  const base: Attributes = { 'messaging.system': 'babelqueue', 'messaging.destination.name': 'bench' };
  return async (env: { job: string; trace_id: string; attempts: number; meta: { id: string; queue?: unknown } }, handle: () => void) => {
    consumed.add(1, { ...base, 'messaging.operation.name': 'process' });
    inFlight.add(1, base);
    const began = performance.now();
    const hex = env.trace_id.replace(/-/g, '');
    const parent = trace.setSpanContext(context.active(), { traceId: hex, spanId: hex.slice(0, 16), traceFlags: TraceFlags.SAMPLED, isRemote: true });
    const span = tracer.startSpan(`process ${env.job}`, {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'babelqueue', 'messaging.operation': 'process', 'messaging.destination.name': String(env.meta.queue),
        'messaging.message.id': env.meta.id, 'messaging.message.conversation_id': env.trace_id, 'messaging.babelqueue.attempts': env.attempts,
      },
    }, parent);
    await context.with(trace.setSpan(parent, span), async () => handle());
    duration.record((performance.now() - began) / 1000, { ...base, 'messaging.operation.name': 'process', 'messaging.babelqueue.urn': env.job });
    span.setAttribute('messaging.babelqueue.decision', 'ack');
    span.end();
    inFlight.add(-1, base);
    handled.add(1, { ...base, 'messaging.babelqueue.urn': env.job });
  };
}

const messages = Array.from({ length: N }, (_, i) => message(i));
type Row = 'bare' | 'bareParse' | 'app' | 'appRun' | 'appOtel' | 'rawOtel';
const results: Record<Row, Sample[]> = { bare: [], bareParse: [], app: [], appRun: [], appOtel: [], rawOtel: [] };
// `app`: app.consume (drain mode); `appRun`: app.run, the worker a service runs
// (shutdown interrupt watched per message), stopped by its signal after N.
async function appRound(name: 'app' | 'appRun' | 'appOtel') {
  const transport = new InMemoryTransport();
  await fill(transport, messages);
  const app = createApp({ transport, queue: 'bench', logger: silentLogger, ...(name === 'appOtel' ? { instrumentation } : {}) });
  const stop = new AbortController();
  let handled = 0;
  app.handle(URN, () => {
    if (++handled === N) stop.abort();
  });
  results[name].push(await timed(N, () => name === 'appRun'
    ? app.run({ signal: stop.signal, concurrency: CONCURRENCY })
    : app.consume({ maxMessages: N, idleMs: 200, concurrency: CONCURRENCY })));
}

// The bare loop only acknowledges; `bareParse` also does what every broker
// benchmark's raw client does per message (strict UTF-8 check, JSON.parse), so
// App minus bareParse is the runtime's cost beyond reading the body at all.
async function bareRound(name: 'bare' | 'bareParse' | 'rawOtel') {
  const bare = new InMemoryTransport();
  await fill(bare, messages);
  const record = name === 'rawOtel' ? rawOtelRecorder() : undefined;
  const noop = () => undefined;
  const onDelivery = name === 'bare'
    ? (d: Delivery) => d.settle({ kind: 'ack' })
    : async (d: Delivery) => {
      if (!isUtf8(d.body)) throw new Error('not UTF-8');
      const env = JSON.parse(d.body.toString('utf8'));
      if (record !== undefined) await record(env, noop);
      return d.settle({ kind: 'ack' });
    };
  results[name].push(await timed(N, () => bare.consume('bench', onDelivery, {
    concurrency: CONCURRENCY, signal: new AbortController().signal, maxMessages: N, idleMs: 200,
  })));
}

// One warm-up round of each (JIT), not counted; then the rows alternate.
const alternate = async () => {
  await bareRound('bare');
  await bareRound('bareParse');
  await appRound('app');
  await appRound('appRun');
};
await alternate();
for (const row of ['bare', 'bareParse', 'app', 'appRun'] as const) results[row].length = 0;
for (let r = 0; r < ROUNDS; r++) await alternate();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
// The OTel rows alternate too, after a warm-up of each.
await appRound('appOtel');
await bareRound('rawOtel');
results.appOtel.length = 0;
results.rawOtel.length = 0;
for (let r = 0; r < OTEL_ROUNDS; r++) {
  await bareRound('rawOtel');
  await appRound('appOtel');
}

/** `app` beside `raw` (a loop, or the App without OTel) as one measurement: medians over the rounds, every round. */
const beside = (mode: string, app: Sample[], raw: Sample[]) => throughputMeasurement(mode, { app: throughputOf(app), raw: throughputOf(raw) }, { app, raw });
// The runtime's own cost: the App's CPU per message over the bare loop's, per
// pair of adjacent rounds (same machine load), then the median of the pairs.
const overRounds = (base: Sample[], app = results.app) => round(median(app.map((a, i) => a.cpuUsPerMsg - base[i]!.cpuUsPerMsg)), 2);
const cpu = (xs: Sample[]) => throughputOf(xs).cpuUs;
printReport({
  bench: 'runtime',
  params: { transport: 'memory', messages: N, concurrency: CONCURRENCY, rounds: ROUNDS, otelRounds: OTEL_ROUNDS },
  measurements: [
    beside('consume (raw: the bare loop)', results.app, results.bare),
    beside('consume (raw: the bare loop + parse)', results.app, results.bareParse),
    beside('run (raw: the bare loop)', results.appRun, results.bare),
    // Not alternated: the OTel rounds run after the others, once the context manager is installed.
    beside('consume + OTel (raw: the App without)', results.appOtel, results.app),
    beside('the bare loop + parse + OTel by hand (raw: without OTel)', results.rawOtel, results.bareParse),
  ],
  reference: {
    runtimeCpuMicrosPerMsg: overRounds(results.bare),
    runtimeOverParseCpuMicrosPerMsg: overRounds(results.bareParse),
    runRuntimeCpuMicrosPerMsg: overRounds(results.bare, results.appRun),
    otelCpuMicrosPerMsg: round(cpu(results.appOtel) - cpu(results.app), 2),
    // What the OTel SDK itself costs for the same telemetry, and the instrumentation against it (aim ≤ 1.3).
    rawOtelCpuMicrosPerMsg: round(cpu(results.rawOtel) - cpu(results.bareParse), 2),
    otelToRawOtel: round((cpu(results.appOtel) - cpu(results.app)) / (cpu(results.rawOtel) - cpu(results.bareParse)), 2),
    note: 'CPU µs per message of the App over a loop, the median of the differences of adjacent rounds (otel: of the medians)',
  },
});
