import { mkdirSync } from 'node:fs';
import { createApp } from '@babelqueue/core';
import { sleep } from '../drivers/driver.js';
import { LedgerReader } from '../ledger.js';
import { WorkerPool } from '../pool.js';
import { JOB_URN, planScripts } from '../scripts.js';
import { controllerTarget, type ScenarioContext } from './context.js';
import { readAll, waitDrained } from './queues.js';

/** The stated bounds: growth of one worker over the soak, after a one-minute warm-up. */
export const SOAK_BOUNDS = { heapMiB: 16, rssMiB: 64 } as const;

/** Messages per second the producer keeps up during a soak. */
const RATE = 100;

export interface SoakResult {
  readonly minutes: number;
  readonly messages: number;
  /** Samples taken after a forced GC: [ms since start, heap used MiB, RSS MiB]. */
  readonly samples: readonly (readonly [number, number, number])[];
  /** Mean of the last minute minus mean of the first minute after the warm-up. */
  readonly heapGrowthMiB: number;
  readonly rssGrowthMiB: number;
  /** Least-squares slope over the samples after the warm-up, MiB per minute. */
  readonly heapSlopeMiBPerMin: number;
  /** Keys published but neither handled nor dead-lettered. */
  readonly lost: number;
  readonly crashes: readonly string[];
  readonly bounds: typeof SOAK_BOUNDS;
}

const MiB = 1024 * 1024;

/**
 * A long steady stream (retries and dead-letters included) through one
 * worker, its heap (after a forced GC) and RSS sampled every 5 s.
 */
export async function runSoak(context: ScenarioContext, minutes: number): Promise<SoakResult> {
  const { driver, say } = context;
  mkdirSync(context.dir, { recursive: true });
  const queue = driver.queue(`rel-soak-${driver.name}-${context.runId}`);
  const target = controllerTarget(context, queue, 'producer');
  const producer = createApp({ transport: driver.transport(target), queue, logger: target.logger, deadLetter: true });
  const dlq = producer.deadLetterQueueName();
  const samples: [number, number, number][] = [];
  const crashes: string[] = [];
  const started = Date.now();
  const pool = new WorkerPool(context.bundle, { driver: driver.name, url: context.url, queue, mode: 'soak', concurrency: 8, dir: context.dir }, {
    onMessage(_worker, message) {
      if (message.type === 'memory') samples.push([message.at - started, message.heapUsed / MiB, message.rss / MiB]);
    },
    onExit(worker) {
      if (worker.killed === undefined) crashes.push(`${worker.id} exited by itself (code ${worker.exited?.code})`);
    },
  });
  const scripts = planScripts(context.rng.fork(), Math.ceil(minutes * 60 * RATE));
  try {
    await driver.prepare?.(target, queue, dlq);
    const worker = pool.start(context.rng.int(2 ** 32));
    if (!(await pool.ready(worker, 180_000))) throw new Error('soak worker did not start consuming');
    const end = Date.now() + minutes * 60_000;
    let k = 0;
    let lastSay = Date.now();
    while (Date.now() < end && crashes.length === 0) {
      const due = Math.min(scripts.length, Math.floor(((Date.now() - started) / 1000) * RATE));
      const batch: Promise<string>[] = [];
      for (; k < due; k++) batch.push(producer.publish(JOB_URN, { k: String(k), s: scripts[k]! }));
      await Promise.all(batch);
      if (Date.now() - lastSay > 60_000) {
        lastSay = Date.now();
        const last = samples.at(-1);
        say(`${Math.round((Date.now() - started) / 60_000)} min, ${k} published${last ? `, heap ${last[1].toFixed(1)} MiB, rss ${last[2].toFixed(1)} MiB` : ''}`);
      }
      await sleep(100);
    }
    // A worker slower than the producer on a busy machine leaves a backlog: wait while it drains.
    await waitDrained(driver, target, queue, 120_000);
    await pool.stopAll(30_000);
    const handled = new Set<string>();
    for (const event of new LedgerReader(context.dir).poll()) if (event.kind === 'H') handled.add(event.key);
    const dead = await readAll(driver, context.url, dlq, 120_000, target.logger);
    for (const body of dead.bodies) {
      const key = (JSON.parse(body.toString('utf8')) as { data?: { k?: string } }).data?.k;
      if (key !== undefined) handled.add(key);
    }
    const warm = samples.filter(([at]) => at >= 60_000);
    const mean = (rows: typeof samples, i: 1 | 2) => rows.reduce((sum, row) => sum + row[i], 0) / Math.max(1, rows.length);
    const first = warm.filter(([at]) => at < 120_000);
    const lastMinute = warm.filter(([at]) => at >= warm.at(-1)![0] - 60_000);
    return {
      minutes,
      messages: k,
      samples: samples.map(([at, heap, rss]) => [at, round(heap), round(rss)] as const),
      heapGrowthMiB: round(mean(lastMinute, 1) - mean(first, 1)),
      rssGrowthMiB: round(mean(lastMinute, 2) - mean(first, 2)),
      heapSlopeMiBPerMin: round(slope(warm.map(([at, heap]) => [at / 60_000, heap]))),
      lost: k - [...handled].filter((key) => Number(key) < k).length,
      crashes,
      bounds: SOAK_BOUNDS,
    };
  } finally {
    await pool.stopAll(10_000);
    await producer.close().catch(() => undefined);
    await driver.cleanup(target, [queue, dlq]).catch(() => undefined);
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

function slope(points: readonly (readonly [number, number])[]): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}
