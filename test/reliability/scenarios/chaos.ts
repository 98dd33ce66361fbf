import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '@babelqueue/core';
import { percentile, recoveryTimes, tally, type DeadLetterRecord, type FaultEvent, type Tally } from '../accounting.js';
import { sleep } from '../drivers/driver.js';
import type { KillKind } from '../kill-points.js';
import { killOwnSockets, ownsBroker, restartBroker } from '../lab.js';
import { LedgerReader, type LedgerEvent } from '../ledger.js';
import { startRefused, WorkerPool, type WorkerRecord } from '../pool.js';
import { JOB_URN, planScripts } from '../scripts.js';
import { controllerTarget, type ScenarioContext } from './context.js';
import { isEmpty, readAll, stealOne, waitEmpty } from './queues.js';

/** What one chaos run does. */
export interface ChaosOptions {
  readonly messages: number;
  /** SIGKILL a random worker every `driver.chaos.killEveryMs` and start a new one. */
  readonly kills: boolean;
  /** Cut every connection at 25 % and 75 % of the stream, and restart the broker (a cluster row: kill its leader node) `restarts` times between. */
  readonly faults: boolean;
  /** Broker restarts (node kills) per stream, spread evenly (see {@link faultPlan}); default 1, at 50 %. */
  readonly restarts?: number;
  /** Self-test: delete one message on purpose before the workers start; the count must show it lost. */
  readonly sabotage: boolean;
}

/** A broker fault, as it happened. */
export interface FaultRecord {
  readonly kind: 'cut' | 'restart';
  readonly at: number;
  /** How long the fault took (a restart: until the broker answered its probe again). */
  readonly ms: number;
  readonly detail: string;
}

export interface ChaosResult {
  readonly tally: Tally;
  readonly published: number;
  /** Publishes that failed (and were sent again), by error name: an outage must make a publish fail loudly, never resolve and drop. */
  readonly publishRejected: Readonly<Record<string, number>>;
  readonly kills: Readonly<Partial<Record<KillKind, number>>>;
  readonly faults: readonly FaultRecord[];
  /** Faults asked for but not run, with why (a broker that cannot restart on its data in the lab). */
  readonly skipped: readonly string[];
  /** Workers that exited without being killed or stopped: a worker must never die by itself. */
  readonly crashes: readonly string[];
  /** Workers started while the broker was down, refused with a ConnectError (by design) and started again. */
  readonly refusedStarts: number;
  /** Log lines that must never appear (a drop: the message would be gone). */
  readonly dropLines: number;
  /** "unexpected error while settling" lines: a binding threw where it should not (the message is left for redelivery). */
  readonly unexpectedErrors: number;
  /** What was left on the broker at the end, by place (all zero: nothing reserved forever). */
  readonly leftover: Record<string, number>;
  readonly dlqLeftover: Record<string, number>;
  readonly recovery: { readonly samples: number; readonly p50?: number; readonly p99?: number; readonly max?: number };
  readonly timing: ChaosTiming;
  /** Self-test only: the key deleted on purpose. */
  readonly stolen?: string;
  readonly ms: number;
  /** Why the run failed to finish (a stall, a worker that never started), if it did. */
  readonly aborted?: string;
}

/** Where a stream's time went, in ms (medians over the run's workers), to find what holds throughput down. */
export interface ChaosTiming {
  /** A worker process, from fork until its code and binding were loaded (a spare does this before it is needed). */
  readonly loadMs?: number;
  /** From being told to consume until consuming (connected, subscribed). */
  readonly startMs?: number;
  /** From consuming until its first handler began. */
  readonly firstDeliveryMs?: number;
  /** Workers consuming, on average over the stream. */
  readonly meanLiveWorkers: number;
  /** How long the producer was held because the backlog was full, and at a fault not started yet. */
  readonly windowHeldMs: number;
  readonly faultHeldMs: number;
  /** First worker consuming → every message settled; the drain after it; reading the DLQ. */
  readonly streamMs: number;
  readonly drainMs: number;
  readonly dlqMs: number;
}

const PUBLISH_LANES = 4;
/** Messages per publishMany of a lane (at most: the window and the fault gate leave room for fewer). */
const PUBLISH_BATCH = 25;
/**
 * Messages published and not settled that the producer allows by default:
 * what kills strand waits out a reservation inside it, so it is several
 * times what the workers hold (3 × 16 on Redis) plus what a kill every few
 * hundred ms strands for a 3-5 s reservation.
 */
const WINDOW = 500;
/** Loaded workers kept waiting under kills: kills come faster than a process loads. */
const SPARES = 2;
/**
 * The broker faults of a stream: at which share of it settled, what. Cuts at
 * 25 % and 75 %; `restarts` restarts at (2i + 1) / 2n, so one is at 50 % and
 * three at 1/6, 1/2 and 5/6 (two would fall on the cuts, and run right after them).
 */
function faultPlan(restarts: number): (readonly [number, 'cut' | 'restart'])[] {
  const plan: (readonly [number, 'cut' | 'restart'])[] = [[0.25, 'cut'], [0.75, 'cut']];
  for (let i = 0; i < restarts; i++) plan.push([(2 * i + 1) / (2 * restarts), 'restart']);
  return plan.sort((a, b) => a[0] - b[0]);
}
const KILL_WEIGHTS: Readonly<Record<KillKind, number>> = { anytime: 40, handler: 15, effect: 15, settle: 15, 'dlq-write': 15 };

/**
 * One stream of `messages` through the binding's workers with faults thrown
 * at it, counted at the end against what went in (see `tally`).
 */
export async function runChaos(context: ScenarioContext, options: ChaosOptions): Promise<ChaosResult> {
  const { driver, rng, say } = context;
  const started = Date.now();
  mkdirSync(context.dir, { recursive: true });
  const queue = driver.queue(`rel-${driver.name}-${context.runId}`);
  const producerTarget = controllerTarget(context, queue, 'producer');
  const producer = createApp({ transport: driver.transport(producerTarget), queue, logger: producerTarget.logger, deadLetter: true });
  const dlq = producer.deadLetterQueueName();
  const scripts = planScripts(rng.fork(), options.messages);
  const tuning = driver.chaos;
  const killRng = rng.fork();
  const seeds = rng.fork();

  const reader = new LedgerReader(context.dir);
  const events: LedgerEvent[] = [];
  const settled = new Set<string>();
  const kills: Partial<Record<KillKind, number>> = {};
  const killFaults: FaultEvent[] = [];
  const faultEvents: FaultEvent[] = [];
  const faults: FaultRecord[] = [];
  const skipped: string[] = [];
  const crashes: string[] = [];
  let refusedStarts = 0;
  const publishRejected: Record<string, number> = {};
  let published = 0;
  let lastProgress = Date.now();
  let finishing = false;
  let aborted: string | undefined;
  let stolen: string | undefined;

  const poll = () => {
    for (const event of reader.poll()) {
      events.push(event);
      if (event.kind === 'H' || (event.kind === 'S' && event.detail === 'dead-letter')) {
        if (!settled.has(event.key)) lastProgress = Date.now();
        settled.add(event.key);
      }
    }
  };

  // Under kills a loaded spare waits, so a killed worker is replaced at once (see WorkerPool).
  const pool = new WorkerPool(context.bundle, { driver: driver.name, url: context.url, queue, mode: 'chaos', concurrency: tuning.concurrency, dir: context.dir }, {
    onExit(worker) {
      if (startRefused(worker)) {
        refusedStarts += 1;
        if (!finishing) pool.start(seeds.int(2 ** 32));
      } else if (worker.killed === undefined) {
        crashes.push(`${worker.id} exited by itself (code ${worker.exited?.code}, signal ${worker.exited?.signal})`);
        if (!finishing) pool.start(seeds.int(2 ** 32));
      } else if (worker.killed.kind !== 'stop') {
        killFaults.push({ kind: 'kill', at: worker.exited!.at, worker: worker.id });
      }
    },
  }, options.kills ? SPARES : 0);
  let windowHeldMs = 0;
  let faultHeldMs = 0;
  let liveSamples = 0;
  let liveSum = 0;

  try {
    await driver.prepare?.(producerTarget, queue, dlq);

    // The producer keeps the backlog bounded, so publishing goes on for the
    // whole run and the faults hit publishes too.
    const window = tuning.window ?? WINDOW;
    // The stream may not run past a planned fault that has not started yet
    // (a slow CLI, a restart still under way): it is held there until it has.
    const plan = faultPlan(options.restarts ?? 1);
    let gate = options.faults ? Math.floor(options.messages * plan[0]![0]) + window : Infinity;
    let nextKey = 0;
    // Each lane publishes batches (app.publishMany, the broker's own batching); the items of a
    // batch that failed are sent again, as a producer would (the rest went through).
    const lane = async () => {
      while (nextKey < options.messages && aborted === undefined) {
        const room = Math.min(PUBLISH_BATCH, options.messages - nextKey, options.sabotage ? Infinity : Math.min(window - (nextKey - settled.size), gate - nextKey));
        if (room <= 0) {
          await sleep(20);
          continue;
        }
        let pending = Array.from({ length: room }, () => nextKey++);
        while (pending.length > 0) {
          try {
            await producer.publishMany(JOB_URN, pending.map((k) => ({ k: String(k), s: scripts[k]! })));
            published += pending.length;
            pending = [];
          } catch (error) {
            const name = error instanceof Error ? error.name : typeof error;
            const failed = (error as { failed?: readonly number[] }).failed;
            const retry = failed === undefined ? pending : failed.map((i) => pending[i]!);
            published += pending.length - retry.length;
            publishRejected[name] = (publishRejected[name] ?? 0) + retry.length;
            pending = retry;
            if (aborted !== undefined) return;
            await sleep(200);
          }
        }
      }
    };
    const producing = Promise.all(Array.from({ length: PUBLISH_LANES }, lane));

    if (options.sabotage) {
      await producing;
      const body = await stealOne(driver, context.url, queue);
      stolen = (JSON.parse(body.toString('utf8')) as { data: { k: string } }).data.k;
      say(`self-test: deleted message ${stolen} on purpose`);
    }

    let streamFrom = Date.now();
    const first = Array.from({ length: options.kills ? tuning.workers : 1 }, () => pool.start(seeds.int(2 ** 32)));
    for (const worker of first) {
      if (!(await pool.ready(worker, 180_000))) throw new Error(`worker ${worker.id} did not start consuming (see ${join(context.dir, `${worker.id}.log`)})`);
    }
    streamFrom = Math.min(...first.map((w) => w.readyAt!));

    const killing = (async () => {
      while (options.kills && !finishing) {
        await sleep(killRng.between(tuning.killEveryMs[0], tuning.killEveryMs[1]));
        const candidates = pool.live().filter((w) => w.killed === undefined && w.readyAt !== undefined);
        // A kill leaves at least one worker consuming, as a supervisor's pool does: on a machine
        // where a start takes seconds, kills would otherwise keep the queue without any worker.
        if (finishing || candidates.length < 2) continue;
        const victim: WorkerRecord = killRng.pick(candidates);
        const kind = killRng.weighted(KILL_WEIGHTS);
        if (kind === 'anytime') pool.kill(victim);
        else pool.arm(victim, kind, 2_000);
        pool.start(seeds.int(2 ** 32));
      }
    })();

    // A shared broker (another checkout's) keeps its other clients: only this run's connections are cut.
    // A cut whose own admin connection fails (a broker slow to answer on a loaded machine) is tried again.
    const cut = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await cutOnce();
        } catch (error) {
          if (attempt === 3) throw error;
          await sleep(2_000);
        }
      }
    };
    const cutOnce = async () => ownsBroker(driver.lab) && driver.cluster === undefined
      ? driver.cut(producerTarget)
      : `ss -K on this run's own connections only (${driver.cluster === undefined ? `${driver.lab} is shared` : `on the ${driver.cluster} cluster`}): ${await killOwnSockets(driver.ports(context.url), [process.pid, ...pool.live().flatMap((w) => (w.child.pid === undefined ? [] : [w.child.pid]))])} connection(s)`;
    let faultsDone = !options.faults;
    const faulting = (async () => {
      if (!options.faults) return;
      for (const [i, [share, kind]] of plan.entries()) {
        while (!finishing && settled.size < options.messages * share) await sleep(100);
        if (finishing) return;
        const at = Date.now();
        const next = plan[i + 1];
        gate = next === undefined ? Infinity : Math.floor(options.messages * next[0]) + window;
        if (kind === 'restart' && driver.nodeKill !== undefined) {
          // A cluster row: the queue's leader node SIGKILLed and brought back instead of a restart.
          say(`node kill at ${settled.size}/${options.messages}`);
          const detail = await driver.nodeKill(queue);
          faultEvents.push({ kind, at });
          faults.push({ kind, at, ms: Date.now() - at, detail });
          continue;
        }
        if (kind === 'restart' && driver.noRestart !== undefined) {
          skipped.push(`restart: ${driver.noRestart}`);
          continue;
        }
        if (kind === 'restart' && !ownsBroker(driver.lab)) {
          // Shared with other checkouts: restarting it would break their runs. CI owns its brokers.
          const why = `${driver.lab} was not started by this checkout's scripts/brokers up (a shared broker is never restarted)`;
          if (process.env.CI === 'true') throw new Error(`restart: ${why}`);
          skipped.push(`restart: ${why}`);
          continue;
        }
        say(`${kind} at ${settled.size}/${options.messages}`);
        const detail = kind === 'cut' ? await cut() : (await restartBroker(driver.lab), `scripts/brokers restart ${driver.lab}`);
        faultEvents.push({ kind, at });
        faults.push({ kind, at, ms: Date.now() - at, detail });
      }
    })().finally(() => {
      faultsDone = true;
    });
    // Awaited once the stream ends (a failed fault fails the row then); until then a rejection
    // must not count as unhandled, which would end the whole suite's process.
    faulting.catch(() => undefined);
    killing.catch(() => undefined);
    producing.catch(() => undefined);

    // Until every message is handled or dead-lettered, or nothing moves for too long.
    const stallMs = Math.max(180_000, tuning.redeliveryMs * 6);
    let lastSay = 0;
    const quietMs = Math.max(10_000, tuning.redeliveryMs * 2);
    let lastLook = 0;
    let lastTick = Date.now();
    // Every planned fault runs, even when the stream outran it.
    while (settled.size < options.messages || published < options.messages || !faultsDone) {
      await sleep(250);
      poll();
      const tick = Date.now() - lastTick;
      lastTick += tick;
      if (nextKey < options.messages && nextKey >= gate) faultHeldMs += tick;
      else if (nextKey < options.messages && nextKey - settled.size >= window) windowHeldMs += tick;
      liveSamples += 1;
      liveSum += pool.live().filter((w) => w.readyAt !== undefined && w.killed === undefined).length;
      if (Date.now() - lastSay > 10_000) {
        lastSay = Date.now();
        const killed = pool.all.filter((w) => w.killed !== undefined && w.killed.kind !== 'stop').length;
        say(`${settled.size}/${options.messages} settled, ${published} published, ${killed} kills, ${crashes.length} crashes`);
      }
      // A worker killed right after its DLQ write went through (before its ledger line) leaves a message
      // that ended on the DLQ with no ledger record: once the queue holds nothing, the end is counted from the DLQ.
      if (!options.sabotage && published === options.messages && faultsDone && Date.now() - lastProgress > quietMs && Date.now() - lastLook > quietMs) {
        lastLook = Date.now();
        if (isEmpty(await driver.leftover(producerTarget, queue).catch(() => ({ unreadable: 1 })))) break;
      }
      if (Date.now() - lastProgress > stallMs && settled.size < options.messages && faultsDone) {
        // Where the unsettled messages wait (ready, locked, scheduled, …) says which side holds them.
        const held = await driver.leftover(producerTarget, queue).catch((error: unknown) => ({ [`unreadable: ${String(error)}`]: 1 }));
        const places = Object.entries(held).map(([place, n]) => `${place} ${n}`).join(', ');
        aborted = `stalled: nothing settled for ${Math.round(stallMs / 1000)} s at ${settled.size}/${options.messages} (the queue held: ${places}; ${pool.live().length} workers live)`;
        break;
      }
      if (options.sabotage && settled.size === options.messages - 1 && published === options.messages) {
        // The stolen one never comes: stop once everything else settled and the queue is empty.
        if (isEmpty(await driver.leftover(producerTarget, queue).catch(() => ({ unreadable: 1 })))) break;
      }
    }
    finishing = true;
    pool.spares = 0;
    const streamMs = Date.now() - streamFrom;
    await killing;
    await faulting;
    await producing;
    await pool.stopAll(30_000);
    const drainFrom = Date.now();

    // Nothing reserved forever: one clean worker takes whatever killed workers
    // left reserved once the broker hands it out again, until every place a
    // message can wait is empty.
    // Checked again once the cleaner stopped: what it held unsettled is back by then.
    const drainUntil = Date.now() + Math.max(120_000, tuning.redeliveryMs * 4);
    let leftover: Record<string, number>;
    do {
      const cleaner = pool.start(seeds.int(2 ** 32));
      await pool.ready(cleaner, 180_000);
      await waitEmpty(driver, producerTarget, queue, Math.max(0, drainUntil - Date.now()));
      await pool.stop(cleaner, 30_000);
      leftover = await waitEmpty(driver, producerTarget, queue, 2_000);
    } while (!isEmpty(leftover) && Date.now() < drainUntil);
    poll();

    // Where each kill landed: the point a worker wrote before killing itself, else outside any.
    const landed = new Map(events.filter((e) => e.kind === 'K').map((e) => [e.worker, e.detail as KillKind]));
    for (const worker of pool.all) {
      if (worker.killed === undefined || worker.killed.kind === 'stop') continue;
      const kind = landed.get(worker.id) ?? 'anytime';
      kills[kind] = (kills[kind] ?? 0) + 1;
    }

    const dlqFrom = Date.now();
    const drainMs = dlqFrom - drainFrom;
    const dead = await readAll(driver, context.url, dlq, 120_000, producerTarget.logger);
    const dlqMs = Date.now() - dlqFrom;
    const records = dead.bodies.map(deadLetterRecord);
    const samples = recoveryTimes(events, [...killFaults, ...faultEvents]);
    const timing: ChaosTiming = {
      ...median('loadMs', pool.all.flatMap((w) => (w.loadedAt === undefined ? [] : [w.loadedAt - w.forkedAt]))),
      ...median('startMs', pool.all.flatMap((w) => (w.readyAt === undefined || w.startedAt === undefined ? [] : [w.readyAt - w.startedAt]))),
      ...median('firstDeliveryMs', firstDeliveries(pool.all, events)),
      meanLiveWorkers: liveSamples === 0 ? 0 : Math.round((liveSum / liveSamples) * 10) / 10,
      windowHeldMs,
      faultHeldMs,
      streamMs,
      drainMs,
      dlqMs,
    };
    say(`stream ${(streamMs / 1000).toFixed(1)} s (${Math.round(options.messages / (streamMs / 1000))} msgs/s), drain ${(drainMs / 1000).toFixed(1)} s, DLQ read ${(dlqMs / 1000).toFixed(1)} s; `
      + `worker load ${timing.loadMs ?? '–'} ms, start ${timing.startMs ?? '–'} ms, first delivery ${timing.firstDeliveryMs ?? '–'} ms (medians); ${timing.meanLiveWorkers} workers consuming on average; `
      + `producer held ${(windowHeldMs / 1000).toFixed(1)} s by its window, ${(faultHeldMs / 1000).toFixed(1)} s at faults; recovery p50 ${percentile(samples, 50) ?? '–'} ms`);
    return {
      tally: tally(scripts, events, records),
      published,
      publishRejected,
      kills,
      faults,
      skipped,
      crashes,
      refusedStarts,
      dropLines: countLines(context.dir, / (ERROR|INFO) dropped\b/),
      unexpectedErrors: countLines(context.dir, /unexpected error while settling/),
      leftover,
      dlqLeftover: dead.left,
      recovery: { samples: samples.length, p50: percentile(samples, 50), p99: percentile(samples, 99), max: percentile(samples, 100) },
      timing,
      ...(stolen !== undefined ? { stolen } : {}),
      ms: Date.now() - started,
      ...(aborted !== undefined ? { aborted } : {}),
    };
  } finally {
    finishing = true;
    await pool.stopAll(10_000);
    await producer.close().catch(() => undefined);
    await driver.cleanup(producerTarget, [queue, dlq]).catch(() => undefined);
  }
}

/** `{ [name]: median }`, or nothing when there are no values. */
function median(name: string, values: readonly number[]): Record<string, number> {
  const m = percentile(values, 50);
  return m === undefined ? {} : { [name]: m };
}

/** For each worker that consumed: from consuming until its first handler began. */
function firstDeliveries(workers: readonly WorkerRecord[], events: readonly LedgerEvent[]): number[] {
  const first = new Map<string, number>();
  for (const event of events) if (event.kind === 'B' && !(event.at >= (first.get(event.worker) ?? Infinity))) first.set(event.worker, event.at);
  return workers.flatMap((w) => {
    const at = first.get(w.id);
    return w.readyAt === undefined || at === undefined ? [] : [Math.max(0, at - w.readyAt)];
  });
}

/** The key and reason of one DLQ record of the chaos stream. */
function deadLetterRecord(body: Buffer): DeadLetterRecord {
  try {
    const record = JSON.parse(body.toString('utf8')) as { data?: { k?: unknown }; dead_letter?: { reason?: unknown } };
    return {
      key: typeof record.data?.k === 'string' ? record.data.k : undefined,
      reason: typeof record.dead_letter?.reason === 'string' ? record.dead_letter.reason : undefined,
    };
  } catch {
    return { key: undefined, reason: undefined };
  }
}

/** Lines of the run's worker logs matching `pattern`. */
function countLines(dir: string, pattern: RegExp): number {
  let n = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.log') || name === 'controller.log') continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) if (pattern.test(line)) n += 1;
  }
  return n;
}
