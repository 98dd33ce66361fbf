/**
 * W worker processes (bench/scale/worker.ts) that drain one queue together:
 * started once per worker count, given one cell after the other.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { sleep } from '../support/measure.js';
import type { FromWorker, RunCommand } from './worker.js';

/** What a cell measured: msgs/s from the first message handled to the last, the workers' CPU per message. */
export interface Drained {
  msgsPerSec: number;
  cpuUsPerMsg: number;
  seconds: number;
}

/** A cell fails when no worker handled a message for this long. */
const STALL_MS = 30_000;

export class Pool {
  private readonly handled: number[];
  private readonly done: (Extract<FromWorker, { type: 'done' }> | undefined)[];
  private exited = false;

  private constructor(private readonly children: ChildProcess[]) {
    this.handled = children.map(() => 0);
    this.done = children.map(() => undefined);
    children.forEach((child, i) => {
      child.on('message', (message: FromWorker) => {
        if (message.type === 'progress') this.handled[i] = message.handled;
        if (message.type === 'done') this.done[i] = message;
      });
      child.once('exit', () => (this.exited = true));
    });
  }

  /** Starts `workers` processes with `env` and waits until each has loaded. */
  static async start(workers: number, env: NodeJS.ProcessEnv): Promise<Pool> {
    const script = join(import.meta.dirname, 'worker.ts');
    const children = Array.from({ length: workers }, () =>
      fork(script, [], { execArgv: ['--conditions=source', '--import', 'tsx'], env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }),
    );
    await Promise.all(children.map((child) => new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`a worker exited with ${String(code)} before it was ready`)));
    })));
    return new Pool(children);
  }

  /** Every worker consumes `queue` at `concurrency` until `count` messages were handled in all; then they stop. */
  async drain(command: Omit<RunCommand, 'type'>, count: number): Promise<Drained> {
    if (this.exited) throw new Error('a worker process of this pool exited');
    this.handled.fill(0);
    this.done.fill(undefined);
    for (const child of this.children) child.send({ type: 'run', ...command });
    let seen = 0;
    let movedAt = Date.now();
    let stalled = false;
    for (;;) {
      const total = this.handled.reduce((a, b) => a + b, 0);
      if (total >= count) break;
      if (total > seen) [seen, movedAt] = [total, Date.now()];
      if (Date.now() - movedAt > STALL_MS || this.exited) {
        stalled = true;
        break;
      }
      await sleep(20);
    }
    for (const child of this.children) if (child.connected) child.send({ type: 'stop' });
    const stopBy = Date.now() + STALL_MS;
    while (this.done.some((d) => d === undefined)) {
      if (this.exited || Date.now() > stopBy) throw new Error('a worker process exited or did not stop');
      await sleep(20);
    }
    const done = this.done as Extract<FromWorker, { type: 'done' }>[];
    const handled = done.reduce((a, d) => a + d.handled, 0);
    const errors = done.flatMap((d) => (d.error !== undefined ? [d.error] : []));
    if (stalled) throw new Error(`stalled at ${handled} of ${count} messages${errors.length > 0 ? `: ${errors[0]}` : ''}`);
    const active = done.filter((d) => d.handled > 0);
    const seconds = (Math.max(...active.map((d) => d.last)) - Math.min(...active.map((d) => d.first))) / 1000;
    const cpuUs = done.reduce((a, d) => a + d.cpuUs, 0);
    // Each worker's first message starts its clocks: handled - W messages in the CPU spans, handled - 1 in the wall span.
    const spanned = Math.max(1, handled - active.length);
    return { msgsPerSec: Math.round((handled - 1) / Math.max(seconds, 0.001)), cpuUsPerMsg: Math.round((cpuUs / spanned) * 10) / 10, seconds };
  }

  /** Ends every worker. */
  async close(): Promise<void> {
    await Promise.all(this.children.map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || !child.connected) return resolve();
      child.once('exit', () => resolve());
      child.send({ type: 'exit' });
    })));
  }
}
