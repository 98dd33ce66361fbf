/**
 * Scaling: throughput with 1, 2 and 4 worker processes at concurrency 1, 16
 * and 64 on every broker that is up; the cost per message by payload size;
 * and, on the Redis zset layout, by queue depth. JSON out (a Report whose
 * figures are in `reference`, with markdown `tables`); docs/scaling.md,
 * "Scaling out (measured)", says what each table means.
 *
 *   npm run bench -- scale [--quick] [--brokers=a,b] [--depth=N] [--messages=N] [--parts=workers,payload,depth]
 *   npm run bench:scale -- [the same flags]
 *
 * - workers: per broker and cell (W processes × concurrency C), a fresh queue
 *   (Kafka: a topic of 8 partitions and a group of its own) is preloaded with
 *   `messages` × the broker's share through the binding's publishMany, then W
 *   worker processes (bench/scale/worker.ts: createApp on the binding, a
 *   no-op handler) drain it. msgs/s from the first message handled to the
 *   last; CPU µs per message of the workers together (from their start on
 *   the cell to their stop; the broker's CPU is not in it).
 * - payload: per broker, bodies of 1 KiB, 64 KiB and 1 MB (10^6 bytes, under
 *   Kafka's default record limit), skipped above the broker's limit (SQS and
 *   Service Bus: 256 KiB; Pulsar: a base64 body in a 1 MiB WebSocket frame):
 *   publish through the App in this process, 16 in flight; then one worker
 *   process at concurrency 16 drains them.
 * A quick run (--quick) takes 1 and 4 workers at concurrency 1 and 16, fewer
 * messages and a backlog of 20,000.
 * - depth (redis-zset): bench/scale/depth.ts.
 *
 * Broker URLs come from the environment or `.brokers/env`; a broker whose
 * URL is unset or whose port does not answer is skipped.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { createApp, silentLogger } from '@babelqueue/core';
import { brokerEnv, reachable } from '../support/brokers.js';
import { round, timed, type Sample } from '../support/measure.js';
import { printReport } from '../support/report.js';
import { benchQueue, DATA, URN, windowed } from '../support/workload.js';
import { BROKERS, KAFKA_PARTITIONS, type Broker } from './brokers.js';
import { depthRow, type Backlog, type DepthRow } from './depth.js';
import { Pool, type Drained } from './pool.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `--name=value` or `--name value`. */
function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return undefined;
  return args[at]!.includes('=') ? args[at]!.slice(name.length + 3) : args[at + 1];
}

const QUICK = process.argv.includes('--quick');
const MESSAGES = Number(option('messages') ?? (QUICK ? 300 : 5000));
const DEPTH = Number(option('depth') ?? (QUICK ? 20_000 : 1_000_000));
const DEPTH_MESSAGES = QUICK ? 1000 : 5000;
const PARTS = (option('parts') ?? 'workers,payload,depth').split(',');
// A quick run measures the corners only.
const WORKERS = QUICK ? [1, 4] : [1, 2, 4];
const CONCURRENCY = QUICK ? [1, 16] : [1, 16, 64];
/** Body sizes and how many of each a payload row moves. */
const PAYLOADS = [
  { label: '1 KiB', bytes: 1024, count: QUICK ? 200 : 2000 },
  { label: '64 KiB', bytes: 64 * 1024, count: QUICK ? 50 : 400 },
  { label: '1 MB', bytes: 1_000_000, count: QUICK ? 10 : 40 },
];

const env = { ...brokerEnv(root), ...process.env };
const picked = option('brokers')?.split(',');
const unknown = picked?.filter((name) => !BROKERS.some((b) => b.name === name)) ?? [];
if (unknown.length > 0) {
  console.error(`unknown broker: ${unknown.join(', ')} (known: ${BROKERS.map((b) => b.name).join(', ')})`);
  process.exit(2);
}
const brokers: { broker: Broker; url: string }[] = [];
const skipped: Record<string, string> = {};
for (const broker of BROKERS) {
  if (picked !== undefined && !picked.includes(broker.name)) continue;
  const url = env[broker.env];
  if (url === undefined || !(await reachable(url))) {
    skipped[broker.name] = `${broker.env} ${url === undefined ? 'not set' : 'not up'}`;
    process.stderr.write(`scale: skipped ${broker.name} (${skipped[broker.name]})\n`);
  } else brokers.push({ broker, url });
}

const log = (line: string) => process.stderr.write(`scale: ${line}\n`);
const timings: Record<string, number> = {};

/** Publishes `count` messages to `queue` through the broker's binding: publishMany in batches, or `window` publishes in flight. */
async function preload(broker: Broker, url: string, queue: string, count: number, pad = ''): Promise<{ publish: Sample }> {
  const app = createApp({ transport: broker.transport(url, queue), queue, logger: silentLogger });
  const publish = await timed(count, () =>
    pad === ''
      ? (async () => {
          for (let i = 0; i < count; i += 100) {
            await app.publishMany(URN, Array.from({ length: Math.min(100, count - i) }, (_, k) => ({ ...DATA, i: i + k })));
          }
        })()
      : windowed(count, 16, (i) => app.publish(URN, { ...DATA, i, pad })),
  );
  await app.close();
  return { publish };
}

interface Cell {
  broker: string;
  workers: number;
  concurrency: number;
  messages: number;
  result?: Drained;
  error?: string;
}

/** Worker processes outermost: a pool of W starts once (a Node start with tsx takes seconds on a busy machine) and serves every broker. */
async function workersMatrix(): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const workers of WORKERS) {
    const pool = await Pool.start(workers, env);
    try {
      for (const { broker, url } of brokers) {
        const started = Date.now();
        const messages = Math.max(50, Math.round(MESSAGES * broker.share));
        for (const concurrency of CONCURRENCY) {
          const queue = benchQueue(`scale-${broker.name}-w${workers}-c${concurrency}`);
          const cell: Cell = { broker: broker.name, workers, concurrency, messages };
          try {
            await broker.prepare?.(url, queue);
            await preload(broker, url, queue, messages);
            cell.result = await pool.drain({ broker: broker.name, url, queue, group: queue, concurrency }, messages);
            log(`${broker.name} W=${workers} c=${concurrency}: ${cell.result.msgsPerSec} msgs/s, ${cell.result.cpuUsPerMsg} µs CPU/msg`);
          } catch (error) {
            cell.error = error instanceof Error ? error.message : String(error);
            log(`${broker.name} W=${workers} c=${concurrency}: failed: ${cell.error}`);
          } finally {
            await broker.cleanup?.(url, queue).catch(() => undefined);
          }
          cells.push(cell);
        }
        const key = `workers ${broker.name}`;
        timings[key] = (timings[key] ?? 0) + Math.round((Date.now() - started) / 1000);
      }
    } finally {
      await pool.close();
    }
  }
  return cells;
}

interface PayloadRow {
  broker: string;
  size: string;
  bytes: number;
  messages: number;
  publish?: Sample;
  consume?: Drained;
  skipped?: string;
  error?: string;
}

async function payloads(): Promise<PayloadRow[]> {
  const rows: PayloadRow[] = [];
  const pool = await Pool.start(1, env);
  try {
    for (const { broker, url } of brokers) {
      const started = Date.now();
      for (const size of PAYLOADS) {
        const count = Math.max(10, Math.round(size.count * broker.share));
        const row: PayloadRow = { broker: broker.name, size: size.label, bytes: size.bytes, messages: count };
        rows.push(row);
        if (broker.maxBody !== undefined && size.bytes > broker.maxBody.bytes) {
          row.skipped = `skipped: ${broker.maxBody.why}`;
          continue;
        }
        const queue = benchQueue(`scale-${broker.name}-p${size.bytes}`);
        try {
          await broker.prepare?.(url, queue);
          // The pad makes the envelope about `bytes` long (the rest of it is about 330 bytes).
          row.publish = (await preload(broker, url, queue, count, 'x'.repeat(Math.max(1, size.bytes - 330)))).publish;
          row.consume = await pool.drain({ broker: broker.name, url, queue, group: queue, concurrency: 16 }, count);
          log(`${broker.name} ${size.label}: publish ${row.publish.msgsPerSec} msgs/s, consume ${row.consume.msgsPerSec} msgs/s`);
        } catch (error) {
          row.error = error instanceof Error ? error.message : String(error);
          log(`${broker.name} ${size.label}: failed: ${row.error}`);
        } finally {
          await broker.cleanup?.(url, queue).catch(() => undefined);
        }
      }
      timings[`payload ${broker.name}`] = Math.round((Date.now() - started) / 1000);
    }
  } finally {
    await pool.close();
  }
  return rows;
}

async function depths(): Promise<DepthRow[]> {
  const zset = brokers.find((b) => b.broker.name === 'redis-zset');
  if (zset === undefined) return [];
  const started = Date.now();
  const rows: DepthRow[] = [];
  for (const backlog of ['empty', 'ready', 'delayed'] as Backlog[]) {
    const row = await depthRow(zset.url, backlog, DEPTH, DEPTH_MESSAGES);
    log(`depth ${backlog}: loaded in ${row.loadSeconds} s, publish ${row.publish.msgsPerSec} msgs/s, consume ${row.consume.msgsPerSec} msgs/s`);
    rows.push(row);
  }
  timings['depth redis-zset'] = Math.round((Date.now() - started) / 1000);
  return rows;
}

const fmt = (x: number | undefined, digits = 0) => (x === undefined ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const usPerMsg = (rate: number | undefined) => (rate === undefined || rate === 0 ? undefined : 1e6 / rate);

function workersTable(cells: Cell[]): string {
  const lines = [
    '| broker | messages per cell | ' + WORKERS.flatMap((w) => CONCURRENCY.map((c) => `W=${w} c=${c}`)).join(' | ') + ' |',
    '| --- | ---: | ' + WORKERS.flatMap(() => CONCURRENCY.map(() => '---:')).join(' | ') + ' |',
  ];
  for (const name of [...new Set(cells.map((c) => c.broker))]) {
    const row = cells.filter((c) => c.broker === name);
    const at = (w: number, c: number) => row.find((x) => x.workers === w && x.concurrency === c);
    lines.push(
      `| ${name} | ${fmt(row[0]?.messages)} | ` +
        WORKERS.flatMap((w) => CONCURRENCY.map((c) => {
          const cell = at(w, c);
          return cell?.result ? `${fmt(cell.result.msgsPerSec)} · ${fmt(cell.result.cpuUsPerMsg)} µs` : 'failed';
        })).join(' | ') + ' |',
    );
  }
  return ['msgs/s · workers\' CPU µs per message (W worker processes × concurrency c):', '', ...lines].join('\n');
}

function payloadTable(rows: PayloadRow[]): string {
  const lines = ['| broker | body | messages | publish msgs/s | publish µs/msg (wall · CPU) | consume msgs/s | consume µs/msg (wall · CPU) |', '| --- | --- | ---: | ---: | ---: | ---: | ---: |'];
  for (const r of rows) {
    if (r.skipped !== undefined || r.error !== undefined) {
      lines.push(`| ${r.broker} | ${r.size} | ${fmt(r.messages)} | ${r.skipped ?? `failed: ${r.error}`} | | | |`);
      continue;
    }
    lines.push(
      `| ${r.broker} | ${r.size} | ${fmt(r.messages)} | ${fmt(r.publish?.msgsPerSec)} | ${fmt(usPerMsg(r.publish?.msgsPerSec))} · ${fmt(r.publish?.cpuUsPerMsg)} | ${fmt(r.consume?.msgsPerSec)} | ${fmt(usPerMsg(r.consume?.msgsPerSec))} · ${fmt(r.consume?.cpuUsPerMsg)} |`,
    );
  }
  return lines.join('\n');
}

function depthTable(rows: DepthRow[]): string {
  const lines = ['| redis-zset backlog | loaded in s | publish msgs/s | publish µs/msg (wall · CPU) | consume msgs/s | consume µs/msg (wall · CPU) |', '| --- | ---: | ---: | ---: | ---: | ---: |'];
  for (const r of rows) {
    const label = r.backlog === 'empty' ? 'empty queue' : `${fmt(r.depth)} ${r.backlog}`;
    lines.push(
      `| ${label} | ${fmt(r.loadSeconds, 1)} | ${fmt(r.publish.msgsPerSec)} | ${fmt(usPerMsg(r.publish.msgsPerSec))} · ${fmt(r.publish.cpuUsPerMsg)} | ${fmt(r.consume.msgsPerSec)} | ${fmt(usPerMsg(r.consume.msgsPerSec))} · ${fmt(r.consume.cpuUsPerMsg)} |`,
    );
  }
  return lines.join('\n');
}

const loadBefore = loadavg().map((x) => round(x, 1));
const cells = PARTS.includes('workers') ? await workersMatrix() : [];
const payloadRows = PARTS.includes('payload') ? await payloads() : [];
const depthRows = PARTS.includes('depth') ? await depths() : [];

printReport({
  bench: 'scale',
  params: {
    quick: QUICK ? 'yes' : 'no',
    messages: MESSAGES,
    depth: DEPTH,
    depthMessages: DEPTH_MESSAGES,
    parts: PARTS.join(','),
    kafkaPartitions: KAFKA_PARTITIONS,
    cores: cpus().length,
    loadBefore: loadBefore.join(' / '),
  },
  measurements: [],
  reference: { skipped, seconds: timings, workers: cells, payload: payloadRows, depth: depthRows },
  tables: [
    ...(cells.length > 0 ? [workersTable(cells)] : []),
    ...(payloadRows.length > 0 ? [payloadTable(payloadRows)] : []),
    ...(depthRows.length > 0 ? [depthTable(depthRows)] : []),
  ],
});
