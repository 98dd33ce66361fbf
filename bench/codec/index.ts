/**
 * Codec throughput beside the bare JSON built-ins, same envelope, same run:
 * make+encode vs JSON.stringify, decode+accepts vs JSON.parse, lossless
 * re-emit (withAttempts / withDeadLetter on the raw bytes) vs a naive
 * parse + stringify. Alternating rounds, best of each; JSON out.
 *
 *   npm run bench:codec            (or: node --conditions=source --import tsx bench/codec/index.ts [iterations])
 */
import {
  EnvelopeCodec,
  deadLetterBlock,
  withAttempts,
  withDeadLetter,
  type Envelope,
  type JsonObject,
} from '@babelqueue/core';

const ITERATIONS = Number(process.argv[2] ?? 30_000);
const ROUNDS = 15;
const URN = 'urn:babel:orders:created';

const SMALL: JsonObject = { order_id: 1042, sku: 'ABC-123', qty: 2, amount_cents: 9990, note: 'café ☕' };
const LARGE: JsonObject = {
  customer: { id: 77, name: 'Zoë Müller', email: 'zoe@example.com', tags: ['vip', 'eu'] },
  lines: Array.from({ length: 40 }, (_, i) => ({ sku: `SKU-${i}`, qty: (i % 3) + 1, price_cents: 1000 + i * 7, gift: i % 5 === 0 })),
  shipping: { street: 'Rue de la Paix 1', city: 'Paris', zip: '75002', country: 'FR' },
};

let sink = 0;
/** Consumes a result so the engine cannot drop the work. */
const keep = (value: string | Buffer | boolean | object) => {
  sink += typeof value === 'string' || Buffer.isBuffer(value) ? value.length : value ? 1 : 0;
};

interface Round {
  /** Operations per wall-clock second. */
  wall: number;
  /** Operations per second of this process's CPU time (steadier on a busy machine). */
  cpu: number;
}

/** One timed round of ITERATIONS calls. */
function round(fn: () => void): Round {
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) fn();
  const wallSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  return { wall: ITERATIONS / wallSeconds, cpu: ITERATIONS / ((cpu.user + cpu.system) / 1e6) };
}

/**
 * Ours beside the baseline: rounds alternate between the two so machine load
 * hits both alike; the best round of each counts. `timeRatio` is our CPU time
 * per operation ÷ the baseline's (below 1: faster than the baseline).
 */
function pair(ours: () => void, baseline: () => void) {
  for (let i = 0; i < 20_000; i++) {
    ours();
    baseline();
  }
  const best = { ours: { wall: 0, cpu: 0 }, baseline: { wall: 0, cpu: 0 } };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [side, fn] of [['ours', ours], ['baseline', baseline]] as const) {
      const result = round(fn);
      best[side].wall = Math.max(best[side].wall, result.wall);
      best[side].cpu = Math.max(best[side].cpu, result.cpu);
    }
  }
  return {
    opsPerCpuSec: Math.round(best.ours.cpu),
    baselineOpsPerCpuSec: Math.round(best.baseline.cpu),
    opsPerSec: Math.round(best.ours.wall),
    baselineOpsPerSec: Math.round(best.baseline.wall),
    timeRatio: Number((best.baseline.cpu / best.ours.cpu).toFixed(3)),
  };
}

function suite(data: JsonObject) {
  const env: Envelope = EnvelopeCodec.make(URN, data, { queue: 'orders' });
  const text = EnvelopeCodec.encode(env);
  const bytes = Buffer.from(text, 'utf8');
  const block = deadLetterBlock({ reason: 'failed', error: 'timeout', exception: 'Error', originalQueue: 'orders', attempts: 3 });
  return {
    bodyBytes: bytes.length,
    makeEncode: pair(
      () => keep(EnvelopeCodec.encode(EnvelopeCodec.make(URN, data, { queue: 'orders' }))),
      () => keep(JSON.stringify(env)),
    ),
    decodeAcceptsString: pair(
      () => keep(EnvelopeCodec.accepts(EnvelopeCodec.decode(text))),
      () => keep(JSON.parse(text) as object),
    ),
    decodeAcceptsBytes: pair(
      () => keep(EnvelopeCodec.accepts(EnvelopeCodec.decode(bytes))),
      () => keep(JSON.parse(bytes.toString('utf8')) as object),
    ),
    retryCopyBytes: pair(
      () => keep(withAttempts(bytes, 1)),
      () => keep(Buffer.from(JSON.stringify({ ...(JSON.parse(bytes.toString('utf8')) as object), attempts: 1 }), 'utf8')),
    ),
    deadLetterRecordBytes: pair(
      () => keep(withDeadLetter(bytes, block)),
      () => keep(Buffer.from(JSON.stringify({ ...(JSON.parse(bytes.toString('utf8')) as object), dead_letter: block }), 'utf8')),
    ),
    retryCopyString: pair(
      () => keep(withAttempts(text, 1)),
      () => keep(JSON.stringify({ ...(JSON.parse(text) as object), attempts: 1 })),
    ),
  };
}

const results = { small: suite(SMALL), large: suite(LARGE) };
console.log(
  JSON.stringify(
    {
      bench: 'codec',
      iterations: ITERATIONS,
      rounds: ROUNDS,
      baselines: {
        makeEncode: 'JSON.stringify of the same envelope object',
        decodeAccepts: 'JSON.parse of the same body (bytes: Buffer#toString + JSON.parse)',
        reemit: 'naive JSON.parse + spread + JSON.stringify (+ Buffer.from for bytes); not lossless',
      },
      timeRatio: 'our CPU time per op ÷ the baseline CPU time per op (1.0 = as fast, below 1 = faster)',
      ...results,
      node: process.version,
      sink: sink > 0,
    },
    null,
    2,
  ),
);
