// A worker of the reliability suite, run as a child process by the
// controller (scenarios/*.ts): the binding's App, as an application runs it,
// with `handleSignals` off (the controller stops it over IPC, or kills it).
// Every step that matters goes to the worker's ledger before it returns.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createApp, type Decision } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { watchSettlements } from './chaos-transport.js';
import { loadDriver } from './drivers/index.js';
import { fileLogger } from './file-logger.js';
import { START_REFUSED, type FromWorker, type KillPoint, type ToWorker } from './kill-points.js';
import { LedgerWriter } from './ledger.js';
import { Rng } from './rng.js';
import { FUZZ_URN, JOB_URN, MAX_ATTEMPTS, failsAt, isScript } from './scripts.js';

/** What the controller passes in `BQ_RELIABILITY_WORKER` (JSON). */
export interface WorkerSpec {
  readonly id: string;
  readonly driver: string;
  readonly url: string;
  readonly queue: string;
  readonly mode: 'chaos' | 'fuzz' | 'soak';
  readonly concurrency: number;
  /** Where the worker's ledger (`<id>.ledger`) and log (`<id>.log`) go. */
  readonly dir: string;
  readonly seed: number;
}

const spec = JSON.parse(process.env.BQ_RELIABILITY_WORKER ?? 'null') as WorkerSpec | null;
if (spec === null) throw new Error('BQ_RELIABILITY_WORKER is not set: this file is started by the reliability controller');

const send = (message: FromWorker) => process.send?.(message);
const rng = new Rng(spec.seed);
const ledger = new LedgerWriter(spec.dir, spec.id);
const logger = fileLogger(join(spec.dir, `${spec.id}.log`), (_level, message) => {
  if (message.startsWith('consuming ')) send({ type: 'ready' });
});

let armed: KillPoint | undefined;
/** SIGKILLs this process now if the controller armed `point`. */
const dieAt = (point: KillPoint) => {
  if (armed !== point) return;
  ledger.write('K', '-', point);
  process.kill(process.pid, 'SIGKILL');
};
const stop = new AbortController();
let go: () => void = () => undefined;
process.on('message', (message: ToWorker) => {
  if (message.type === 'arm') armed = message.point;
  else if (message.type === 'go') go();
  else if (message.type === 'stop') stop.abort();
});
// The controller going away must not leave workers behind.
process.on('disconnect', () => stop.abort());

const keyOf = (body: Buffer): string => {
  if (spec.mode === 'fuzz') return createHash('sha1').update(body).digest('hex');
  try {
    const k = (JSON.parse(body.toString('utf8')) as { data?: { k?: unknown } }).data?.k;
    return typeof k === 'string' ? k : '?';
  } catch {
    return '?';
  }
};

const driver = await loadDriver(spec.driver);
// Loaded (the slow part of a start): wait until the pool starts this worker (a spare waits here).
await new Promise<void>((resolve) => {
  go = resolve;
  stop.signal.addEventListener('abort', () => resolve(), { once: true });
  send({ type: 'loaded' });
});
if (stop.signal.aborted) {
  ledger.close();
  process.exit();
}
const transport = watchSettlements(driver.transport({ url: spec.url, logger, queue: spec.queue, role: 'worker' }), {
  started(_delivery: Delivery, decision: Decision) {
    const point = decision.kind === 'dead-letter' ? 'dlq-write' : 'settle';
    // A few ms later, so the kill lands anywhere in the settlement's round trip.
    if (armed !== point) return;
    armed = undefined;
    setTimeout(() => {
      ledger.write('K', '-', point);
      process.kill(process.pid, 'SIGKILL');
    }, rng.int(5));
  },
  settled(delivery: Delivery, decision: Decision) {
    ledger.write('S', keyOf(delivery.body), decision.kind);
  },
});

const app = createApp({
  transport,
  queue: spec.queue,
  maxAttempts: MAX_ATTEMPTS,
  deadLetter: true,
  onUnknownUrn: 'dead_letter',
  shutdownTimeoutMs: 10_000,
  logger,
});

app.handle(JOB_URN, async (data, message) => {
  const { k, s } = data as { k?: unknown; s?: unknown };
  if (typeof k !== 'string' || !isScript(s)) throw new Error('not a message of this run');
  ledger.write('B', k, message.attempts);
  dieAt('handler');
  await new Promise((resolve) => setTimeout(resolve, rng.int(6)));
  if (failsAt(s, message.attempts)) {
    ledger.write('F', k, message.attempts);
    throw new Error(`scripted failure (${s}, attempt ${message.attempts})`);
  }
  ledger.write('H', k, message.attempts);
  dieAt('effect');
});

app.handle(FUZZ_URN, (_data, message) => {
  const key = createHash('sha1').update(message.body).digest('hex');
  ledger.write('B', key, message.attempts);
  ledger.write('H', key, message.attempts);
});

if (spec.mode === 'soak') {
  const sample = () => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    send({ type: 'memory', at: Date.now(), heapUsed: m.heapUsed, rss: m.rss, external: m.external });
  };
  setInterval(sample, 5_000).unref();
}

try {
  await app.run({ concurrency: spec.concurrency, signal: stop.signal, handleSignals: false });
} catch (error) {
  logger.error({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }, 'worker run failed');
  // A broker that cannot be reached at start-up is refused at once, by design
  // (a supervisor starts the worker again), and so is an SQS queue the server
  // has not restored yet (ElasticMQ answers before it reads its queues back
  // after a restart); anything else is a crash.
  process.exitCode = error instanceof Error && (error.name === 'ConnectError' || error.name === 'QueueNotFoundError') ? START_REFUSED : 1;
} finally {
  ledger.close();
}
process.exit();
