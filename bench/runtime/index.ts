/**
 * App overhead on the in-memory transport: messages/s through createApp with a
 * no-op handler (gate, decode, validate, route, settle) beside a bare loop
 * over the same transport that only acknowledges, in the same run. JSON out.
 *
 *   node --conditions=source --import tsx bench/runtime/index.ts [messages] [concurrency]
 */
import { createApp, EnvelopeCodec, InMemoryTransport, silentLogger, type OutgoingMessage } from '@babelqueue/core';

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

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return Math.round(N / seconds);
}

const messages = Array.from({ length: N }, (_, i) => message(i));
const results: Record<string, number[]> = { bare: [], app: [] };
for (let round = 0; round < 3; round++) {
  const bare = new InMemoryTransport();
  await fill(bare, messages);
  results.bare!.push(await timed(() => bare.consume('bench', (d) => d.settle({ kind: 'ack' }), {
    concurrency: CONCURRENCY, signal: new AbortController().signal, maxMessages: N, idleMs: 200,
  })));

  const transport = new InMemoryTransport();
  await fill(transport, messages);
  const app = createApp({ transport, queue: 'bench', logger: silentLogger });
  app.handle(URN, () => undefined);
  results.app!.push(await timed(() => app.consume({ maxMessages: N, idleMs: 200, concurrency: CONCURRENCY })));
}

const best = (xs: number[]) => Math.max(...xs);
console.log(JSON.stringify({
  bench: 'runtime',
  transport: 'memory',
  messages: N,
  concurrency: CONCURRENCY,
  bareMsgsPerSec: best(results.bare!),
  appMsgsPerSec: best(results.app!),
  appToBareRatio: Number((best(results.app!) / best(results.bare!)).toFixed(3)),
  rounds: results,
  node: process.version,
}, null, 2));
