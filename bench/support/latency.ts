/**
 * Publish → handler latency at a fixed offered rate (`OfferedLoad`), shared
 * by the broker benches: the App side (the same on every broker but for its
 * transport), the message index a raw consumer reads back, and the rounds.
 */
import { createApp, silentLogger, type Transport } from '@babelqueue/core';
import type { Latency, OfferedLoad } from './measure.js';
import { alternate } from './rounds.js';
import { DATA, URN } from './workload.js';

/**
 * The App's latency under `load`: `app.run` at `concurrency` on `queue` (a
 * worker: no drain limits), a handler that reports each message's index,
 * `app.publish` at the offered rate; the worker stopped and the App closed
 * afterwards.
 */
export async function appLatency(transport: Transport, queue: string, load: OfferedLoad, concurrency: number): Promise<Latency> {
  const app = createApp({ transport, queue, logger: silentLogger }).handle(URN, (data) => load.seen(Number(data.i)));
  const stop = new AbortController();
  const consuming = app.run({ concurrency, signal: stop.signal });
  try {
    return await load.run((i) => app.publish(URN, { ...DATA, i }));
  } finally {
    stop.abort();
    await consuming;
    await app.close();
  }
}

/** The index `i` of a bench message, from its envelope's JSON (the raw side's parse). */
export const indexOf = (body: string) => (JSON.parse(body) as { data: { i: number } }).data.i;

/**
 * Latency rounds per side. A round's p99 is set by its slowest few dozen
 * messages, so one stall (a GC pause, the lab's other processes) moves it by
 * several ms on either side; the median of five rounds is decided by no
 * single one, where the median of two was their mean.
 */
export const LATENCY_ROUNDS = 5;

/**
 * {@link LATENCY_ROUNDS} rounds of each side's latency, the side that goes
 * first alternating. With `warmUp` (a process that measured nothing before),
 * one round of each side first, not counted: a cold process (JIT, first
 * connections) falls behind the offered rate and measures its backlog, not
 * the latency.
 */
export async function latencyRounds(raw: () => Promise<Latency>, app: () => Promise<Latency>, warmUp: boolean): Promise<{ raw: Latency[]; app: Latency[] }> {
  if (warmUp) await alternate(1, [async () => void (await raw()), async () => void (await app())]);
  const runs = { raw: [] as Latency[], app: [] as Latency[] };
  await alternate(LATENCY_ROUNDS, [async () => void runs.raw.push(await raw()), async () => void runs.app.push(await app())]);
  return runs;
}
