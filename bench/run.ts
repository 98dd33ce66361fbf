/**
 * `npm run bench [-- name… [--flag…]]`: runs every benchmark (or the named ones) one
 * after the other, each in its own process, skipping those whose broker is not
 * up; writes bench/results/latest.json and prints one table per benchmark:
 * msgs/s and CPU µs per message for the App, the raw client (and BullMQ where
 * the bench has it), with the ratios, then the latency percentiles.
 *
 * Flags go to every bench named (`npm run bench -- scale --quick`).
 *
 * Broker URLs come from the environment or `.brokers/env` (`scripts/brokers up`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokerEnv, reachable } from './support/brokers.js';
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
  // Every broker that is up, with 1, 2 and 4 worker processes; it skips the others itself.
  { name: 'scale' },
];

type Outcome =
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string; seconds: number }
  | { status: 'ok'; seconds: number; loadBefore: number[]; measurements: Measurement[]; result: unknown };

function runBench(name: string, flags: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join('bench', name, 'index.ts'), ...flags], {
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
  } else if (!isReport(outcome.result) || outcome.result.tables === undefined) {
    lines.push('(no msgs/s rows: see the JSON)');
  }
  if (isReport(outcome.result) && outcome.result.tables !== undefined) lines.push(...outcome.result.tables.flatMap((t) => ['', t]));
  if (latency.length > 0) {
    lines.push('', '| latency | offered msgs/s | raw p50 / p99 / p99.9 ms | App p50 / p99 / p99.9 ms |', '| --- | ---: | ---: | ---: |');
    const p = (x: LatencyFigures) => `${cell(x.p50Ms, 1)} / ${cell(x.p99Ms, 1)} / ${cell(x.p999Ms, 1)}${x.unhandled ? ` (${x.unhandled} not handled in time)` : ''}`;
    for (const l of latency) lines.push(`| ${l.mode} | ${cell(l.offeredPerSec)} | ${p(l.raw.latency)} | ${p(l.app.latency)} |`);
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  // Names pick benches; `--…` flags (e.g. `scale --quick`) go to every bench picked.
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const flags = process.argv.slice(2).filter((a) => a.startsWith('-') && a !== '--');
  const unknown = wanted.filter((w) => !BENCHES.some((b) => b.name === w));
  if (unknown.length > 0) {
    console.error(`unknown bench: ${unknown.join(', ')} (known: ${BENCHES.map((b) => b.name).join(', ')})`);
    process.exit(2);
  }
  const env = { ...brokerEnv(root), ...process.env };
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
    const { code, stdout, timedOut } = await runBench(bench.name, flags, env);
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
