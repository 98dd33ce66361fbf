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
  readonly forkedAt: number;
  /** When it had loaded its code and binding (it then waits to be told to consume). */
  loadedAt?: number;
  /** When the pool told it to consume (undefined while it is a spare). */
  startedAt?: number;
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

/**
 * Starts, kills and stops worker processes, and tells the controller what they do.
 *
 * A worker starts in two steps: the process loads its code and its binding
 * (the slow part, about a second on two busy cores), says `loaded`, and waits
 * until the pool tells it to consume. With `spares`, the pool keeps that many
 * loaded workers waiting, as a supervisor with a pool of warm processes does,
 * so a killed worker is replaced at once rather than a second later. A spare
 * holds no connection and no message; it is never a kill's victim.
 */
export class WorkerPool {
  readonly all: WorkerRecord[] = [];
  private next = 0;
  private readonly waiting: WorkerRecord[] = [];

  constructor(
    private readonly bundle: WorkerBundle,
    private readonly base: Omit<WorkerSpec, 'id' | 'seed'>,
    private readonly events: {
      readonly onExit?: (worker: WorkerRecord) => void;
      readonly onMessage?: (worker: WorkerRecord, message: FromWorker) => void;
    } = {},
    /** Loaded workers kept waiting (0 once the run winds down). */
    public spares = 0,
  ) {}

  /** Workers started (told to consume) and not exited. */
  live(): WorkerRecord[] {
    return this.all.filter((w) => w.exited === undefined && w.startedAt !== undefined);
  }

  /** Starts a worker: a waiting spare when there is one (then `seed` goes to the spare forked in its place). */
  start(seed: number): WorkerRecord {
    const record = this.waiting.shift() ?? this.fork(seed);
    record.startedAt = Date.now();
    if (record.loadedAt !== undefined) this.send(record, { type: 'go' });
    while (this.waiting.length < this.spares) this.waiting.push(this.fork((seed + this.next * 0x9e3779b9) >>> 0));
    return record;
  }

  private fork(seed: number): WorkerRecord {
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
    const record: WorkerRecord = { id, child, forkedAt: Date.now() };
    child.on('message', (message: FromWorker) => {
      if (message.type === 'loaded') {
        record.loadedAt ??= Date.now();
        // Told to start while it was still loading: it starts now.
        if (record.startedAt !== undefined) this.send(record, { type: 'go' });
      }
      if (message.type === 'ready') record.readyAt ??= Date.now();
      this.events.onMessage?.(record, message);
    });
    child.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      record.exited = { at: Date.now(), code, signal };
      const spare = this.waiting.indexOf(record);
      if (spare >= 0) this.waiting.splice(spare, 1);
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

  /** Stops every worker gracefully (in-flight messages settle first), spares too; SIGKILL after `timeoutMs`. */
  async stopAll(timeoutMs: number): Promise<void> {
    await Promise.all(this.all.filter((w) => w.exited === undefined).map((worker) => this.stop(worker, timeoutMs)));
  }

  async stop(worker: WorkerRecord, timeoutMs: number): Promise<void> {
    if (worker.exited !== undefined) return;
    worker.killed ??= { kind: 'stop', at: Date.now() };
    const exited = new Promise<void>((resolve) => worker.child.once('exit', () => resolve()));
    if (worker.startedAt === undefined) {
      // A spare holds nothing (and may not listen yet): it just goes.
      worker.child.kill('SIGKILL');
      await exited;
      return;
    }
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
