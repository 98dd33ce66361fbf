import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './lab.js';
import { START_REFUSED, type FromWorker, type KillKind, type ToWorker } from './kill-points.js';
import type { WorkerSpec } from './worker.js';

/**
 * The worker program, bundled once per run with the package sources (the
 * `source` export condition, as `npm test` runs them): a bundled worker
 * starts in about a second on a busy 2-core machine instead of three, which
 * is what lets the controller kill and replace workers every few hundred ms.
 */
export class WorkerBundle {
  private constructor(readonly dir: string, readonly entry: string) {}

  static async build(): Promise<WorkerBundle> {
    const dir = mkdtempSync(join(tmpdir(), 'babelqueue-reliability-'));
    await build({
      entryPoints: [join(ROOT, 'test/reliability/worker.ts')],
      outdir: dir,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      conditions: ['source'],
      outExtension: { '.js': '.mjs' },
      logLevel: 'warning',
      // CommonJS dependencies (ioredis, kafkajs, …) call require().
      banner: { js: "import { createRequire as __bqRequire } from 'node:module'; const require = __bqRequire(import.meta.url);" },
    });
    return new WorkerBundle(dir, join(dir, 'worker.mjs'));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One worker process and what happened to it. */
export interface WorkerRecord {
  readonly id: string;
  readonly child: ChildProcess;
  readonly startedAt: number;
  readyAt?: number;
  /** Set when the controller killed it (or told it to stop): its exit is expected. */
  killed?: { readonly kind: KillKind | 'stop'; readonly at: number };
  exited?: { readonly at: number; readonly code: number | null; readonly signal: NodeJS.Signals | null };
}

/**
 * A worker that exited by itself because the broker could not be reached at
 * start-up (the App's documented ConnectError), as opposed to a crash: a
 * worker started while the broker restarts, which its supervisor (here the
 * controller) starts again.
 */
export function startRefused(worker: WorkerRecord): boolean {
  return worker.killed === undefined && worker.readyAt === undefined && worker.exited?.code === START_REFUSED;
}

/** Starts, kills and stops worker processes, and tells the controller what they do. */
export class WorkerPool {
  readonly all: WorkerRecord[] = [];
  private next = 0;

  constructor(
    private readonly bundle: WorkerBundle,
    private readonly base: Omit<WorkerSpec, 'id' | 'seed'>,
    private readonly events: {
      readonly onExit?: (worker: WorkerRecord) => void;
      readonly onMessage?: (worker: WorkerRecord, message: FromWorker) => void;
    } = {},
  ) {}

  /** Workers started and not exited. */
  live(): WorkerRecord[] {
    return this.all.filter((w) => w.exited === undefined);
  }

  start(seed: number): WorkerRecord {
    const id = `w${String(this.next++).padStart(4, '0')}`;
    const spec: WorkerSpec = { ...this.base, id, seed };
    // Its stderr (a crash's stack trace) goes to its log file.
    const log = openSync(join(this.base.dir, `${id}.log`), 'a');
    const child = fork(this.bundle.entry, [], {
      env: { ...process.env, BQ_RELIABILITY_WORKER: JSON.stringify(spec) },
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'ignore', log, 'ipc'],
      cwd: ROOT,
    });
    closeSync(log);
    const record: WorkerRecord = { id, child, startedAt: Date.now() };
    child.on('message', (message: FromWorker) => {
      if (message.type === 'ready') record.readyAt ??= Date.now();
      this.events.onMessage?.(record, message);
    });
    child.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      record.exited = { at: Date.now(), code, signal };
      this.events.onExit?.(record);
    });
    this.all.push(record);
    return record;
  }

  /** SIGKILL now, from outside. */
  kill(worker: WorkerRecord): void {
    worker.killed ??= { kind: 'anytime', at: Date.now() };
    worker.child.kill('SIGKILL');
  }

  /** Tells the worker to SIGKILL itself at `point`; from outside after `fallbackMs` if it never gets there. */
  arm(worker: WorkerRecord, point: Exclude<KillKind, 'anytime'>, fallbackMs: number): void {
    worker.killed ??= { kind: point, at: Date.now() };
    this.send(worker, { type: 'arm', point });
    setTimeout(() => {
      if (worker.exited === undefined) worker.child.kill('SIGKILL');
    }, fallbackMs).unref();
  }

  /** Stops every live worker gracefully (in-flight messages settle first); SIGKILL after `timeoutMs`. */
  async stopAll(timeoutMs: number): Promise<void> {
    await Promise.all(this.live().map((worker) => this.stop(worker, timeoutMs)));
  }

  async stop(worker: WorkerRecord, timeoutMs: number): Promise<void> {
    if (worker.exited !== undefined) return;
    worker.killed ??= { kind: 'stop', at: Date.now() };
    const exited = new Promise<void>((resolve) => worker.child.once('exit', () => resolve()));
    this.send(worker, { type: 'stop' });
    const timer = setTimeout(() => worker.child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  /** Waits until `worker` is consuming (or exits, or `timeoutMs` passes); true when ready. */
  async ready(worker: WorkerRecord, timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (worker.readyAt === undefined && worker.exited === undefined && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return worker.readyAt !== undefined;
  }

  private send(worker: WorkerRecord, message: ToWorker): void {
    if (worker.child.connected) worker.child.send(message, () => undefined);
  }
}
