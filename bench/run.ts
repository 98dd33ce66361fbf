/**
 * `npm run bench [-- name…]`: runs every benchmark (or the named ones) one
 * after the other, each in its own process, skipping those whose broker is not
 * up; writes bench/results/latest.json and prints one table per benchmark:
 * msgs/s and CPU µs per message for the App, the raw client (and BullMQ where
 * the bench has it), with the ratios, then the latency percentiles.
 *
 * Broker URLs come from the environment or `.brokers/env` (`scripts/brokers up`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** One bench's process may run this long (a busy machine is slow); past it the bench counts as failed. */
const BENCH_TIMEOUT_MS = 30 * 60_000;

/** Every bench, in the order they run; `broker` names the URL variable it needs. */
const BENCHES: { name: string; broker?: string; env?: string }[] = [
  { name: 'codec' },
  { name: 'runtime' },
  { name: 'redis', broker: 'redis', env: 'BABELQUEUE_REDIS_URL' },
  { name: 'rabbitmq', broker: 'rabbitmq', env: 'BABELQUEUE_RABBITMQ_URL' },
  { name: 'kafka', broker: 'kafka', env: 'BABELQUEUE_KAFKA_URL' },
  { name: 'sqs', broker: 'sqs', env: 'BABELQUEUE_SQS_URL' },
  { name: 'pulsar', broker: 'pulsar', env: 'BABELQUEUE_PULSAR_URL' },
  { name: 'artemis', broker: 'artemis', env: 'BABELQUEUE_ARTEMIS_URL' },
  { name: 'asb', broker: 'asb (stand-in)', env: 'BABELQUEUE_ASB_URL' },
];

/** One line of a bench's table. */
export interface Row {
  mode: string;
  rawMsgsPerSec?: number;
  appMsgsPerSec?: number;
  appToRawRatio?: number;
  rawCpuUsPerMsg?: number;
  appCpuUsPerMsg?: number;
  bullmqMsgsPerSec?: number;
}

/** p50/p99/p99.9 of one side, in ms. */
interface Percentiles {
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** Messages not handled before the bench's deadline (left out of the percentiles). */
  unhandled?: number;
}

interface LatencyRow {
  mode: string;
  offeredPerSec?: number;
  raw: Percentiles;
  app: Percentiles;
}

type Outcome =
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string; seconds: number }
  | { status: 'ok'; seconds: number; loadBefore: number[]; rows: Row[]; latency: LatencyRow[]; result: unknown };

function brokerEnv(): Record<string, string> {
  const file = join(root, '.brokers', 'env');
  const env: Record<string, string> = {};
  if (!existsSync(file)) return env;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m && process.env[m[1]!] === undefined) env[m[1]!] = m[2]!;
  }
  return env;
}

/** host:port of a broker URL (amqp://u:p@h:p, kafka://h:p,…, http://h:p, Endpoint=sb://h:p;…). */
function address(url: string): { host: string; port: number } | undefined {
  const m = /^(?:Endpoint=)?[a-z]+:\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^:/,;?]+)(?::(\d+))?/i.exec(url);
  if (m === null) return undefined;
  const scheme = url.replace(/^Endpoint=/i, '').split(':')[0]!.toLowerCase();
  const defaults: Record<string, number> = { redis: 6379, amqp: 5672, amqps: 5671, kafka: 9092, http: 80, https: 443, sb: 5671 };
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] !== undefined ? Number(m[2]) : (defaults[scheme] ?? 80) };
}

function reachable(url: string): Promise<boolean> {
  const where = address(url);
  if (where === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(where);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function runBench(name: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join('bench', name, 'index.ts')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, BENCH_TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, timedOut });
    });
  });
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

/** A label for one element of a result array (its layout/concurrency/mode when it has them). */
function elementLabel(element: Record<string, unknown>, index: number): string {
  const parts = [];
  if (typeof element.mode === 'string') parts.push(element.mode);
  if (typeof element.layout === 'string') parts.push(element.layout);
  if (num(element.concurrency) !== undefined) parts.push(`c=${String(element.concurrency)}`);
  return parts.length > 0 ? parts.join(' ') : String(index);
}

/**
 * Finds the App-beside-raw figures in a bench's JSON, whatever its shape:
 * objects with `rawMsgsPerSec`/`bareMsgsPerSec` and `appMsgsPerSec`, objects
 * with numeric `raw` and `app` (and `bullmq`), and `latency` blocks.
 */
export function extract(result: unknown): { rows: Row[]; latency: LatencyRow[] } {
  const rows: Row[] = [];
  const latency: LatencyRow[] = [];
  const walk = (node: unknown, path: string[]) => {
    if (Array.isArray(node)) {
      node.forEach((element, i) => walk(element, [...path, typeof element === 'object' && element !== null ? elementLabel(element as Record<string, unknown>, i) : String(i)]));
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const o = node as Record<string, unknown>;
    const mode = path.join(' ') || 'all';
    const raw = num(o.rawMsgsPerSec) ?? num(o.bareMsgsPerSec) ?? num(o.raw);
    const app = num(o.appMsgsPerSec) ?? num(o.app);
    if (raw !== undefined && app !== undefined) {
      const cpu = (o.cpuMicrosPerMsg ?? {}) as Record<string, unknown>;
      const row: Row = { mode, rawMsgsPerSec: raw, appMsgsPerSec: app, appToRawRatio: Math.round((app / raw) * 1000) / 1000 };
      const rawCpu = num(o.rawCpuUsPerMsg) ?? num(cpu.bare) ?? num(cpu.raw);
      const appCpu = num(o.appCpuUsPerMsg) ?? num(cpu.app);
      const bull = num(o.bullmqMsgsPerSec) ?? num(o.bullmq);
      if (rawCpu !== undefined) row.rawCpuUsPerMsg = rawCpu;
      if (appCpu !== undefined) row.appCpuUsPerMsg = appCpu;
      if (bull !== undefined) row.bullmqMsgsPerSec = bull;
      rows.push(row);
    }
    for (const [key, value] of Object.entries(o)) {
      if (key === 'rounds') continue;
      if (key === 'latency' && typeof value === 'object' && value !== null && 'raw' in value && 'app' in value) {
        const l = value as { offeredPerSec?: number; raw: Percentiles; app: Percentiles };
        const row: LatencyRow = { mode: [...path, 'latency'].join(' '), raw: l.raw, app: l.app };
        if (l.offeredPerSec !== undefined) row.offeredPerSec = l.offeredPerSec;
        latency.push(row);
        continue;
      }
      walk(value, key === 'results' ? path : [...path, key]);
    }
  };
  walk(result, []);
  return { rows, latency };
}

const cell = (x: number | undefined, digits = 0) => (x === undefined ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** Markdown tables for one bench. */
export function table(name: string, outcome: Outcome): string {
  if (outcome.status !== 'ok') return `### ${name}\n\n${outcome.status}: ${outcome.reason}\n`;
  const lines = [`### ${name}`, '', `load average before: ${outcome.loadBefore.map((x) => x.toFixed(1)).join(' / ')} on ${cpus().length} cores`, ''];
  if (outcome.rows.length > 0) {
    const bull = outcome.rows.some((r) => r.bullmqMsgsPerSec !== undefined);
    lines.push(`| mode | raw msgs/s | App msgs/s | App / raw | raw CPU µs/msg | App CPU µs/msg | CPU raw / App |${bull ? ' BullMQ msgs/s | App / BullMQ |' : ''}`);
    lines.push(`| --- | ---: | ---: | ---: | ---: | ---: | ---: |${bull ? ' ---: | ---: |' : ''}`);
    for (const r of outcome.rows) {
      const cpuRatio = r.rawCpuUsPerMsg !== undefined && r.appCpuUsPerMsg !== undefined ? r.rawCpuUsPerMsg / r.appCpuUsPerMsg : undefined;
      const bullCells = bull
        ? ` ${cell(r.bullmqMsgsPerSec)} | ${r.bullmqMsgsPerSec !== undefined && r.appMsgsPerSec !== undefined ? cell(r.appMsgsPerSec / r.bullmqMsgsPerSec, 2) : '–'} |`
        : '';
      lines.push(
        `| ${r.mode} | ${cell(r.rawMsgsPerSec)} | ${cell(r.appMsgsPerSec)} | ${cell(r.appToRawRatio, 2)} | ${cell(r.rawCpuUsPerMsg, 1)} | ${cell(r.appCpuUsPerMsg, 1)} | ${cell(cpuRatio, 2)} |${bullCells}`,
      );
    }
  } else {
    lines.push('(no msgs/s rows: see the JSON)');
  }
  if (outcome.latency.length > 0) {
    lines.push('', '| latency | offered msgs/s | raw p50 / p99 / p99.9 ms | App p50 / p99 / p99.9 ms |', '| --- | ---: | ---: | ---: |');
    const p = (x: Percentiles) => `${cell(x.p50Ms, 1)} / ${cell(x.p99Ms, 1)} / ${cell(x.p999Ms, 1)}${x.unhandled ? ` (${x.unhandled} not handled in time)` : ''}`;
    for (const l of outcome.latency) lines.push(`| ${l.mode} | ${cell(l.offeredPerSec)} | ${p(l.raw)} | ${p(l.app)} |`);
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !BENCHES.some((b) => b.name === w));
  if (unknown.length > 0) {
    console.error(`unknown bench: ${unknown.join(', ')} (known: ${BENCHES.map((b) => b.name).join(', ')})`);
    process.exit(2);
  }
  const env = { ...brokerEnv(), ...process.env };
  const outcomes: Record<string, Outcome> = {};
  for (const bench of BENCHES) {
    if (wanted.length > 0 && !wanted.includes(bench.name)) continue;
    const url = bench.env === undefined ? undefined : env[bench.env];
    if (bench.env !== undefined && (url === undefined || !(await reachable(url)))) {
      outcomes[bench.name] = { status: 'skipped', reason: `${bench.broker ?? bench.name} not up` };
      console.log(`skipped: ${bench.broker ?? bench.name} not up`);
      continue;
    }
    console.error(`bench ${bench.name}…`);
    const loadBefore = loadavg();
    const started = Date.now();
    const { code, stdout, timedOut } = await runBench(bench.name, env);
    const seconds = Math.round((Date.now() - started) / 1000);
    let result: unknown;
    try {
      result = JSON.parse(stdout.slice(stdout.indexOf('{')));
    } catch {
      result = undefined;
    }
    const outcome: Outcome =
      code === 0 && result !== undefined
        ? { status: 'ok', seconds, loadBefore, ...extract(result), result }
        : { status: 'failed', seconds, reason: timedOut ? `timed out after ${BENCH_TIMEOUT_MS / 60_000} min` : `exit ${String(code)}, output not JSON` };
    outcomes[bench.name] = outcome;
    console.log(table(bench.name, outcome));
  }
  const file = join(root, 'bench', 'results', 'latest.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), node: process.version, cores: cpus().length, benches: outcomes }, null, 2) + '\n');
  console.log(`results: ${file}`);
}

// Run when started as a script (not when a test or another script imports extract/table).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
