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
import { isLatency, isReport, type LatencyFigures, type Measurement, type ThroughputMeasurement } from './support/report.js';

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

type Outcome =
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string; seconds: number }
  | { status: 'ok'; seconds: number; loadBefore: number[]; measurements: Measurement[]; result: unknown };

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

/** The measurements in a bench's JSON: a Report's (none when it is not one, e.g. codec's). */
export function measurementsOf(result: unknown): Measurement[] {
  return isReport(result) ? result.measurements : [];
}

const cell = (x: number | undefined, digits = 0) => (x === undefined ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** Markdown tables for one bench. */
export function table(name: string, outcome: Outcome): string {
  if (outcome.status !== 'ok') return `### ${name}\n\n${outcome.status}: ${outcome.reason}\n`;
  const lines = [`### ${name}`, '', `load average before: ${outcome.loadBefore.map((x) => x.toFixed(1)).join(' / ')} on ${cpus().length} cores`, ''];
  const rows = outcome.measurements.filter((m): m is ThroughputMeasurement => !isLatency(m));
  const latency = outcome.measurements.filter(isLatency);
  if (rows.length > 0) {
    const bull = rows.some((r) => r.bullmq !== undefined);
    lines.push(`| mode | raw msgs/s | App msgs/s | App / raw | raw CPU µs/msg | App CPU µs/msg | CPU raw / App |${bull ? ' BullMQ msgs/s | App / BullMQ |' : ''}`);
    lines.push(`| --- | ---: | ---: | ---: | ---: | ---: | ---: |${bull ? ' ---: | ---: |' : ''}`);
    for (const r of rows) {
      const bullCells = bull ? ` ${cell(r.bullmq?.rate)} | ${cell(r.appToBullmq, 2)} |` : '';
      lines.push(
        `| ${r.mode} | ${cell(r.raw.rate)} | ${cell(r.app.rate)} | ${cell(r.appToRaw, 2)} | ${cell(r.raw.cpuUs, 1)} | ${cell(r.app.cpuUs, 1)} | ${cell(r.cpuRawToApp, 2)} |${bullCells}`,
      );
    }
  } else {
    lines.push('(no msgs/s rows: see the JSON)');
  }
  if (latency.length > 0) {
    lines.push('', '| latency | offered msgs/s | raw p50 / p99 / p99.9 ms | App p50 / p99 / p99.9 ms |', '| --- | ---: | ---: | ---: |');
    const p = (x: LatencyFigures) => `${cell(x.p50Ms, 1)} / ${cell(x.p99Ms, 1)} / ${cell(x.p999Ms, 1)}${x.unhandled ? ` (${x.unhandled} not handled in time)` : ''}`;
    for (const l of latency) lines.push(`| ${l.mode} | ${cell(l.offeredPerSec)} | ${p(l.raw.latency)} | ${p(l.app.latency)} |`);
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
        ? { status: 'ok', seconds, loadBefore, measurements: measurementsOf(result), result }
        : { status: 'failed', seconds, reason: timedOut ? `timed out after ${BENCH_TIMEOUT_MS / 60_000} min` : `exit ${String(code)}, output not JSON` };
    outcomes[bench.name] = outcome;
    console.log(table(bench.name, outcome));
  }
  const file = join(root, 'bench', 'results', 'latest.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), node: process.version, cores: cpus().length, benches: outcomes }, null, 2) + '\n');
  console.log(`results: ${file}`);
}

// Run when started as a script (not when a test or another script imports measurementsOf/table).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
