/**
 * App overhead on the in-memory transport: messages/s through createApp with a
 * no-op handler (gate, decode, validate, route, settle), through `consume()`
 * and through `run()`, beside a bare loop over the same transport that only
 * acknowledges, and one that also checks UTF-8 and JSON.parses each body, in
 * the same run, in alternating rounds after one warm-up round of each (medians
 * count: the machine is shared); then the same App with @babelqueue/otel (a
 * consumer span per message through the OTel SDK with an AsyncLocalStorage
 * context, exported to a discarding exporter, plus the metrics). Each with its
 * CPU time per message. Prints a Report (bench/support/report.ts): the App
 * beside each loop as a measurement ("raw" is the loop), the OTel rounds beside
 * the App's, and in `reference` the CPU differences taken round by round.
 *
 *   node --conditions=source --import tsx bench/runtime/index.ts [messages] [concurrency] [rounds]
 */
import { context } from '@opentelemetry/api';
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
const instrumentation = otelInstrumentation({
  tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(discard)] }),
  meterProvider: new MeterProvider({ readers: [new Reader()] }),
});

const messages = Array.from({ length: N }, (_, i) => message(i));
type Row = 'bare' | 'bareParse' | 'app' | 'appRun' | 'appOtel';
const results: Record<Row, Sample[]> = { bare: [], bareParse: [], app: [], appRun: [], appOtel: [] };
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
async function bareRound(name: 'bare' | 'bareParse') {
  const bare = new InMemoryTransport();
  await fill(bare, messages);
  const onDelivery = name === 'bare'
    ? (d: Delivery) => d.settle({ kind: 'ack' })
    : (d: Delivery) => {
      if (!isUtf8(d.body)) throw new Error('not UTF-8');
      JSON.parse(d.body.toString('utf8'));
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
for (let r = 0; r < OTEL_ROUNDS; r++) await appRound('appOtel');

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
  ],
  reference: {
    runtimeCpuMicrosPerMsg: overRounds(results.bare),
    runtimeOverParseCpuMicrosPerMsg: overRounds(results.bareParse),
    runRuntimeCpuMicrosPerMsg: overRounds(results.bare, results.appRun),
    otelCpuMicrosPerMsg: round(cpu(results.appOtel) - cpu(results.app), 2),
    note: 'CPU µs per message of the App over a loop, the median of the differences of adjacent rounds (otel: of the medians)',
  },
});
