// `npm run reliability [-- options]`: the reliability suite. See README.md.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLUSTER_DRIVERS, DRIVERS, loadDriver } from './drivers/index.js';
import { brokerUrl, brokerVariable, clusterUrl, clusterVariable, ROOT } from './lab.js';
import { WorkerBundle } from './pool.js';
import { judge, printTable, type DriverReport, type Report } from './report.js';
import { freshSeed, Rng } from './rng.js';
import { logDigest } from './log-digest.js';
import { runChaos } from './scenarios/chaos.js';
import type { ScenarioContext } from './scenarios/context.js';
import { runFuzz } from './scenarios/fuzz.js';
import { runSoak } from './scenarios/soak.js';

const USAGE = `npm run reliability -- [options]

  --full              100,000 messages and 100,000 fuzzed bodies per broker (default: the CI sizes, 5,000 and 10,000)
  --seed N            replay the random choices of an earlier run (printed at its start)
  --brokers a,b       only these drivers (${Object.keys(DRIVERS).join(', ')})
  --cluster           the cluster rows instead (${Object.keys(CLUSTER_DRIVERS).join(', ')}), on scripts/clusters' lab:
                      the broker restart of each stream is the queue's leader (primary) node SIGKILLed and restored
  --except a,b        every driver but these
  --only a,b          only these parts: self-test, chaos, fuzz (default: all three); --only soak --soak N runs the soak alone
  --messages N        messages per chaos stream
  --restarts N        broker restarts (on --cluster: leader node kills) per chaos stream (default 1; 3 with --full --cluster)
  --fuzz N            fuzzed bodies per broker
  --parallel N        run up to N brokers at once (default 3); rows on one server (redis-legacy,
                      redis-zset) always run one after the other
  --soak MINUTES      also a memory soak of that many minutes per broker (on demand, not in CI)
  --report FILE       where the JSON report goes (default reliability-report.json)`;

const { values } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    cluster: { type: 'boolean', default: false },
    seed: { type: 'string' },
    brokers: { type: 'string' },
    except: { type: 'string' },
    only: { type: 'string' },
    messages: { type: 'string' },
    restarts: { type: 'string' },
    fuzz: { type: 'string' },
    soak: { type: 'string' },
    parallel: { type: 'string' },
    report: { type: 'string', default: 'reliability-report.json' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const number = (text: string | undefined, fallback: number, what: string): number => {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer, got ${text}`);
  return n;
};
const seed = number(values.seed, freshSeed(), '--seed');
// The issue's sizes: CI 5,000 messages and 10,000 fuzzed bodies per broker; --full 100,000 of each.
const messages = number(values.messages, values.full ? 100_000 : 5_000, '--messages');
// The cluster rows' full size kills the leader node three times per stream (issue #30).
const restarts = number(values.restarts, values.full && values.cluster ? 3 : 1, '--restarts');
const fuzzBodies = number(values.fuzz, values.full ? 100_000 : 10_000, '--fuzz');
const soakMinutes = number(values.soak, 0, '--soak');
const parts = new Set((values.only ?? 'self-test,chaos,fuzz').split(','));
const except = values.except?.split(',') ?? [];
const rows = values.cluster ? CLUSTER_DRIVERS : DRIVERS;
const names = (values.brokers?.split(',') ?? Object.keys(rows)).filter((name) => !except.includes(name));
for (const name of [...names, ...except]) if (!(name in rows)) throw new Error(`unknown broker driver "${name}" (one of: ${Object.keys(rows).join(', ')})`);

const runId = `${seed.toString(16)}-${Date.now().toString(36)}`;
const logs = join(ROOT, '.reliability', runId);
console.log(`reliability suite: seed ${seed} (--seed ${seed} replays its choices), ${messages} messages and ${fuzzBodies} fuzzed bodies per broker${soakMinutes > 0 ? `, ${soakMinutes}-minute soak` : ''}, up to ${values.parallel ?? 3} brokers at once`);
console.log(`logs and ledgers: ${logs}`);

const started = Date.now();
const parallel = Math.max(1, number(values.parallel, 3, '--parallel'));
const bundle = await WorkerBundle.build();
const reports = new Map<string, DriverReport>();

/** One broker's row: self-test, chaos, fuzz (and soak); a part that throws fails the row, the suite goes on. */
async function runDriver(name: string): Promise<DriverReport> {
  const driver = await loadDriver(name);
  const url = driver.cluster === undefined ? brokerUrl(driver.lab) : clusterUrl(driver.cluster);
  if (url === undefined) {
    const why = driver.cluster === undefined
      ? `${brokerVariable(driver.lab)} is not set; start it with \`scripts/brokers up ${driver.lab}\``
      : `${clusterVariable(driver.cluster)} is not set; start it with \`scripts/clusters up ${driver.cluster}\``;
    if (process.env.CI === 'true') throw new Error(`${name} cannot run under CI=true: ${why}`);
    console.log(`\n*** SKIPPED: ${name} — ${why} ***`);
    return { broker: name, description: driver.description, skipped: why, failures: [] };
  }
  const rng = new Rng(seed ^ hash(name));
  const context = (part: string): ScenarioContext => ({
    driver,
    url,
    rng: rng.fork(),
    bundle,
    dir: join(logs, name, part),
    runId: `${runId}-${part}`,
    say: (line) => console.log(`[${name} ${part}] ${line}`),
  });
  console.log(`\n== ${name}: ${driver.description}`);
  const report: DriverReport = { broker: name, description: driver.description, failures: [] };
  const t0 = Date.now();
  const errors: string[] = [];
  const part = async (name: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      errors.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  if (parts.has('self-test')) await part('self-test', async () => {
    report.selfTest = await runChaos(context('self-test'), { messages: 50, kills: false, faults: false, sabotage: true });
  });
  if (parts.has('chaos')) await part('chaos', async () => {
    report.chaos = await runChaos(context('chaos'), { messages, kills: true, faults: true, restarts, sabotage: false });
  });
  if (parts.has('fuzz')) await part('fuzz', async () => {
    report.fuzz = await runFuzz(context('fuzz'), fuzzBodies);
  });
  if (soakMinutes > 0) await part('soak', async () => {
    report.soak = await runSoak(context('soak'), soakMinutes);
  });
  report.ms = Date.now() - t0;
  report.failures = [...errors, ...judge(report)];
  console.log(report.failures.length === 0 ? `== ${name}: passed (${Math.round(report.ms / 1000)} s)` : `== ${name}: FAILED\n   - ${report.failures.join('\n   - ')}`);
  return report;
}

// Rows that share a server run one after the other (a row restarts its server
// mid-stream, which must not hit another row); the groups run `parallel` at once.
const groups = new Map<string, string[]>();
for (const name of names) {
  const driver = await loadDriver(name);
  const lab = driver.cluster ?? driver.lab;
  groups.set(lab, [...(groups.get(lab) ?? []), name]);
}
const queue = [...groups.values()];
try {
  await Promise.all(Array.from({ length: Math.min(parallel, queue.length) }, async () => {
    for (let group = queue.shift(); group !== undefined; group = queue.shift()) {
      for (const name of group) {
        reports.set(name, await runDriver(name));
        // Written after every row, so a run stopped part-way keeps the rows it finished.
        writeReport();
      }
    }
  }));
} finally {
  bundle.remove();
}

const report = writeReport();
console.log();
printTable(report);
const failed = report.drivers.filter((r) => r.failures.length > 0);
console.log(`\nreport: ${values.report}; ${Math.round(report.ms / 1000)} s in all; seed ${seed}`);
if (failed.length > 0) {
  // Repeated last, with what the row's processes logged, so that a CI log cut to its tail still says why.
  for (const r of failed) {
    console.log(`FAILED: ${r.broker}\n   - ${r.failures.join('\n   - ')}`);
    const digest = logDigest(join(logs, r.broker));
    if (digest.length > 0) console.log(`   logged (${join(logs, r.broker)}):\n     ${digest.join('\n     ')}`);
  }
  process.exitCode = 1;
}
// Every row is counted and reported: a client a failover left reconnecting (an
// ioredis Sentinel connection once kept a CI run waiting here) must not hold the run.
process.exit();

/** Writes the report of the rows finished so far (in the order asked for) and returns it. */
function writeReport(): Report {
  const done = names.flatMap((name) => reports.get(name) ?? []);
  const report: Report = { seed, sizes: { messages, fuzzBodies, soakMinutes }, startedAt: new Date(started).toISOString(), ms: Date.now() - started, drivers: done };
  writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

/** A stable 32-bit hash of a name (FNV-1a), so each driver's plan does not depend on which others run. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
