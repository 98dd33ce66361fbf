/**
 * App overhead on the in-memory transport: messages/s through createApp with a
 * no-op handler (gate, decode, validate, route, settle) beside a bare loop
 * over the same transport that only acknowledges, in the same run; and the
 * same App with @babelqueue/otel (a consumer span per message through the OTel
 * SDK with an AsyncLocalStorage context, exported to a discarding exporter,
 * plus the metrics) beside it. Each with its CPU time per message. JSON out.
 *
 *   node --conditions=source --import tsx bench/runtime/index.ts [messages] [concurrency]
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createApp, EnvelopeCodec, InMemoryTransport, silentLogger, type OutgoingMessage } from '@babelqueue/core';
import { otelInstrumentation } from '@babelqueue/otel';

const N = Number(process.argv[2] ?? 50_000);
const CONCURRENCY = Number(process.argv[3] ?? 1);
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

/** Messages/s and CPU µs (user + system) per message. */
async function timed(run: () => Promise<unknown>): Promise<{ rate: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { rate: Math.round(N / seconds), cpuUs: Number(((used.user + used.system) / N).toFixed(2)) };
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
const results: Record<'bare' | 'app' | 'appOtel', { rate: number; cpuUs: number }[]> = { bare: [], app: [], appOtel: [] };
async function appRound(name: 'app' | 'appOtel') {
  const transport = new InMemoryTransport();
  await fill(transport, messages);
  const app = createApp({ transport, queue: 'bench', logger: silentLogger, ...(name === 'appOtel' ? { instrumentation } : {}) });
  app.handle(URN, () => undefined);
  results[name].push(await timed(() => app.consume({ maxMessages: N, idleMs: 200, concurrency: CONCURRENCY })));
}

for (let round = 0; round < 3; round++) {
  const bare = new InMemoryTransport();
  await fill(bare, messages);
  results.bare.push(await timed(() => bare.consume('bench', (d) => d.settle({ kind: 'ack' }), {
    concurrency: CONCURRENCY, signal: new AbortController().signal, maxMessages: N, idleMs: 200,
  })));
  await appRound('app');
}
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
for (let round = 0; round < 3; round++) await appRound('appOtel');

const best = (xs: { rate: number }[]) => Math.max(...xs.map((x) => x.rate));
const leastCpu = (xs: { cpuUs: number }[]) => Math.min(...xs.map((x) => x.cpuUs));
console.log(JSON.stringify({
  bench: 'runtime',
  transport: 'memory',
  messages: N,
  concurrency: CONCURRENCY,
  bareMsgsPerSec: best(results.bare),
  appMsgsPerSec: best(results.app),
  appOtelMsgsPerSec: best(results.appOtel),
  appToBareRatio: Number((best(results.app) / best(results.bare)).toFixed(3)),
  otelToAppRatio: Number((best(results.appOtel) / best(results.app)).toFixed(3)),
  cpuMicrosPerMsg: { bare: leastCpu(results.bare), app: leastCpu(results.app), appOtel: leastCpu(results.appOtel) },
  otelCpuMicrosPerMsg: Number((leastCpu(results.appOtel) - leastCpu(results.app)).toFixed(2)),
  rounds: results,
  node: process.version,
}, null, 2));
