import type { ConsumeOptions, Delivery } from './transport.js';

/** Fetches up to `max` deliveries, waiting at most `waitMs` for the first. */
export type Fetch = (max: number, waitMs: number, signal: AbortSignal) => Promise<Delivery[]>;

/**
 * The consume loop of a pull-style transport (in-memory, Service Bus): fetches
 * as many deliveries as there are free slots (blocking up to the poll wait), keeps at most `concurrency` in
 * flight, honours the drain limits, and on abort stops fetching and waits for
 * every in-flight delivery to settle. `idleMs` counts the time spent waiting
 * for deliveries only, never the time a fetch spends connecting.
 */
export async function pullLoop(
  fetch: Fetch,
  onDelivery: (delivery: Delivery) => Promise<void>,
  options: ConsumeOptions,
  pollWaitMs = 1000,
): Promise<void> {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const { signal, maxMessages, idleMs } = options;
  const inFlight = new Set<Promise<void>>();
  let taken = 0;
  let lastActivity = Date.now();
  try {
    while (!signal.aborted && (maxMessages === undefined || taken < maxMessages)) {
      if (inFlight.size >= concurrency) {
        await Promise.race(inFlight);
        continue;
      }
      const free = Math.min(concurrency - inFlight.size, maxMessages === undefined ? Infinity : maxMessages - taken);
      const idleLeft = idleMs === undefined ? pollWaitMs : idleMs - (Date.now() - lastActivity);
      if (idleMs !== undefined && idleLeft <= 0) {
        if (inFlight.size === 0) break;
        await Promise.race(inFlight);
        continue;
      }
      const wait = Math.max(0, Math.min(pollWaitMs, idleLeft));
      // A fetch returns as soon as one delivery is there, or after `wait`.
      const started = Date.now();
      const batch = await fetch(free, wait, signal);
      // Only waiting for deliveries counts as idle: time a fetch took beyond its
      // wait (connecting, opening a link, a reconnect's pause) does not.
      const overrun = Date.now() - started - wait;
      if (overrun > 0) lastActivity += overrun;
      for (const delivery of batch) {
        taken += 1;
        lastActivity = Date.now();
        // onDelivery owns its errors (the runtime logs and leaves the delivery for
        // redelivery); a rejection here must not stop the loop.
        const job: Promise<void> = always(onDelivery(delivery), () => {
          inFlight.delete(job);
          lastActivity = Date.now();
        });
        inFlight.add(job);
      }
    }
  } finally {
    await Promise.allSettled(inFlight);
  }
}

/** Runs `done` once `work` settles, either way; the promise it returns never rejects. */
function always(work: Promise<void>, done: () => void): Promise<void> {
  return work.then(done, done);
}
