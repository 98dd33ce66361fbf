import type { Delivery, Transport } from '../transport/transport.js';

/** Options of {@link drainQueue}. */
export interface DrainOptions {
  /** Take at most this many deliveries (>= 1). */
  readonly max: number;
  /**
   * End the drain once no delivery arrived for this long (the per-pop wait).
   * Until the first delivery the transport's own idle rule applies (a Kafka
   * consumer counts from joining its group); after it, the drain's.
   * Absent: the drain ends only at `max` or when `signal` aborts.
   */
  readonly idleMs?: number;
  /** Aborting ends the drain early; what was taken is still handed to `work`. */
  readonly signal?: AbortSignal;
  /** Called for each delivery as it is taken (streaming output); it must not settle it. */
  readonly onTaken?: (delivery: Delivery) => void;
}

/**
 * Takes up to `max` deliveries of `queue` and holds every one of them
 * unsettled until the drain ends, then hands the whole batch to `work`, which
 * must settle each delivery exactly once. Holding keeps the consume loop from
 * meeting a record twice when `work` writes records back to the same queue
 * (DLQ redrive restores, a peek that leaves messages for redelivery), and it
 * works on every transport because the deliveries are settled while the
 * transport's consume loop is still running.
 *
 * If the consume loop fails before the drain ends, the taken deliveries stay
 * unsettled (the broker redelivers them) and the error is rethrown. A
 * delivery that arrives after the drain ended is left unsettled at once.
 */
export async function drainQueue<T>(
  transport: Transport,
  queue: string,
  options: DrainOptions,
  work: (taken: readonly Delivery[]) => Promise<T>,
): Promise<T> {
  const { max, idleMs, signal, onTaken } = options;
  if (signal?.aborted) return work([]);
  const taken: Delivery[] = [];
  const stop = new AbortController();
  let ended = false;
  let endDrain!: () => void;
  const drainEnded = new Promise<void>((resolve) => (endDrain = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdle = () => {
    clearTimeout(idleTimer);
    if (idleMs !== undefined) idleTimer = setTimeout(endDrain, idleMs);
  };
  const onAbort = () => endDrain();
  signal?.addEventListener('abort', onAbort, { once: true });

  const onDelivery = async (delivery: Delivery): Promise<void> => {
    if (ended || taken.length >= max) {
      // Not part of this batch: give it straight back. A failure here leaves it unsettled anyway.
      await delivery.settle({ kind: 'unsettled', why: 'arrived after the drain ended' }).catch(() => undefined);
      return;
    }
    taken.push(delivery);
    onTaken?.(delivery);
    if (taken.length >= max) endDrain();
    else armIdle();
    await released;
  };

  const consuming = transport.consume(queue, onDelivery, {
    concurrency: max,
    maxMessages: max,
    // A take-up-to stops at a chosen record: what comes before it must come first.
    inOrder: true,
    signal: stop.signal,
    ...(idleMs !== undefined ? { idleMs } : {}),
  });
  try {
    await Promise.race([drainEnded, consuming]);
  } catch (error) {
    release();
    throw error;
  } finally {
    ended = true;
    clearTimeout(idleTimer);
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }

  let result: T;
  try {
    result = await work(taken);
  } catch (error) {
    release();
    await consuming.catch(() => undefined);
    throw error;
  }
  release();
  await consuming;
  return result;
}
