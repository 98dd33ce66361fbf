import { pause, reconnectDelayMs, type ConsumeOptions, type Logger, type ResolvedReconnectBackoff } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { isFatal } from './errors.js';
import { ackBatch, MAX_BATCH, readAhead } from './consume/read-ahead.js';
import { NOTHING, type Reserved, type Reserver, type Want } from './consume/reserver.js';
import { Notifier } from './consume/signal.js';

/** The pause after consecutive failed reserves: 100 ms doubling, at most 1 s (`50 × 2^failures`, capped). */
const RESERVE_RETRY_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 100, maxDelayMs: 1000, multiplier: 2 });

/**
 * The consume loop of one queue: keeps at most `concurrency` handlers running
 * and, while the queue is deep, a read-ahead of reserved deliveries waiting
 * for a slot ({@link readAhead}). A handler's slot is free once its delivery
 * is settled: an ack waits for the next script call, which carries the acks
 * queued so far and reserves what the free slots and the read-ahead lack (at
 * most {@link MAX_BATCH}), so handlers go on with the read-ahead while that
 * call is on its way ({@link ackBatch} says when it goes). `onDelivery` still
 * resolves only once Redis ran the ack. A read-ahead delivery is reserved
 * under a lease of a few seconds that the reserver renews while the loop holds
 * it; its full reservation is written as its handler begins (a crashed
 * consumer's read-ahead is back in the queue within seconds, uncounted), and
 * one whose lease is in doubt waits for the renewal, or is dropped when the
 * lease lapsed. A running delivery's reservation is renewed until it settles. On a
 * drain limit it stops reserving (it never reserves past `maxMessages`) and
 * hands over what it holds; on abort it stops reserving, gives the read-ahead
 * back to the head of the ready list (or, when that call fails, leaves it to
 * expire and be recovered), and waits until every delivery handed over has
 * settled. CROSSSLOT and WRONGTYPE end it with the error; other Redis errors
 * are logged and retried with a back-off.
 */
export async function consumeLoop(
  reserver: Reserver,
  onDelivery: (delivery: Delivery) => Promise<void>,
  options: ConsumeOptions,
  pollWaitMs: number,
  logger: Logger,
  queue: string,
): Promise<void> {
  const { signal, maxMessages, idleMs } = options;
  const concurrency = options.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be an integer >= 1, got ${String(concurrency)}`);
  }
  const buffer: Reserved[] = [];
  /** Handed over and not settled yet: what occupies the slots. */
  const running = new Set<Delivery>();
  /** Fired when a slot frees, a call returns, a delivery finishes or the signal aborts. */
  const changed = new Notifier();
  /**
   * Ends the idle wait under way, if any: a call brought deliveries, a lease renewal returned
   * or the signal aborted. One resolver per wait, dropped after it: a Notifier waiter would stay
   * registered until the next delivery, one more with every poll of an idle queue.
   */
  let endIdle: (() => void) | undefined;
  // An abort wakes the waits below. (Racing a never-settling abort promise in
  // every wait would pile one reaction per wait onto it until the loop ends.)
  const wake = () => {
    changed.fire();
    endIdle?.();
  };
  signal.addEventListener('abort', wake, { once: true });
  /** Handed over and `onDelivery` not resolved yet (running, or waiting for Redis to run its settlement). */
  let inFlight = 0;
  let taken = 0;
  let lastActivity = Date.now();
  let open = true;
  let failures = 0;
  let fatal: unknown;
  /** The last reserve filled fewer than its free slots: the ready list was empty, so the next step is a wait. */
  let drained = false;

  const left = () => (maxMessages === undefined ? Infinity : maxMessages - taken - buffer.length - reserver.reserving);
  const ahead = reserver.readsAhead ? readAhead(concurrency) : 0;
  const batch = ackBatch(concurrency);
  /** What to reserve now: the free slots and the read-ahead, less what is held or already asked for. */
  const wanted = (): Want => {
    const room = Math.min(left(), MAX_BATCH);
    const held = running.size + buffer.length + reserver.reserving;
    const slots = Math.max(0, Math.min(concurrency - held, room));
    return { slots, ahead: Math.max(0, Math.min(concurrency + ahead - held, room) - slots) };
  };
  reserver.attach({
    released: (delivery) => {
      if (running.delete(delivery)) changed.fire();
    },
    // Enough acks for a call, or none can join them until a call returns.
    flushNow: (queued) => queued >= batch || (running.size === 0 && buffer.length === 0),
    demand: () => (open && !signal.aborted ? wanted() : NOTHING),
    deliver: (deliveries) => {
      buffer.push(...deliveries);
      changed.fire();
      // An ack's call that reserved nothing leaves an idle wait to the wake-up or the poll.
      if (deliveries.length > 0) endIdle?.();
    },
    refresh: wake,
  });

  const finish = (delivery: Delivery) => {
    running.delete(delivery);
    inFlight -= 1;
    lastActivity = Date.now();
    changed.fire();
  };
  const hand = (delivery: Reserved) => {
    taken += 1;
    inFlight += 1;
    running.add(delivery);
    lastActivity = Date.now();
    onDelivery(delivery).then(
      () => finish(delivery),
      (error: unknown) => {
        logger.error({ queue, error: String(error) }, 'delivery handling failed; the message stays reserved');
        finish(delivery);
      },
    );
  };
  /** The deliveries at the head of the buffer that may go to handlers now, at most `max`. */
  const handable = (max: number): number => {
    let n = 0;
    while (n < max && n < buffer.length) {
      const state = reserver.leaseState(buffer[n]!);
      if (state === 'good') {
        n += 1;
      } else if (state === 'lost' && n === 0) {
        // Its lease lapsed and the message went back to the queue: another delivery now.
        reserver.untrack(buffer.shift()!);
        changed.fire();
      } else {
        // Doubtful at the head: wait for the renewal, in FIFO order.
        if (n === 0) reserver.renewNow();
        break;
      }
    }
    return n;
  };
  /**
   * Once a handler held the event loop this long, the full reservations of the read-ahead are
   * written before handlers run rather than in the turn's call (reserver.begin), which a handler
   * blocking the loop would hold back until its lease lapsed.
   */
  const BLOCKING_MS = 200;
  let eager = false;
  // Hands over as many as there are free slots, their full reservations begun (reserver.begin). A
  // handler that settles at once frees its slot inside hand(), so one pass may hand over the whole
  // read-ahead; one that aborts stops it there (nothing more is handed over once aborted: the rest
  // of the chunk stays at the head of the buffer, to be given back).
  const pump = () => {
    while (!signal.aborted) {
      const n = handable(concurrency - running.size);
      if (n === 0) return;
      reserver.begin(buffer.slice(0, n), eager);
      for (let i = 0; i < n; i++) {
        if (signal.aborted) {
          // Begun already: written before the give-back, which names the full reservations.
          reserver.flushBegins();
          return;
        }
        const started = eager ? 0 : performance.now();
        hand(buffer.shift()!);
        if (!eager && performance.now() - started > BLOCKING_MS) {
          eager = true;
          logger.info({ queue, ms: Math.round(performance.now() - started) }, 'a handler blocked the event loop; read-ahead reservations are now extended before handlers start');
        }
      }
    }
  };

  /** On abort: once no reserve is in flight, the read-ahead goes back; when that fails it expires and is recovered. */
  const giveBack = async () => {
    while (reserver.reserving > 0) await changed.next();
    // One whose lease lapsed went back to the queue already (and may be another consumer's now).
    const back = buffer.splice(0).filter((d) => {
      if (reserver.leaseState(d) !== 'lost') return true;
      reserver.untrack(d);
      return false;
    });
    if (back.length === 0) return;
    try {
      await reserver.giveBack(back);
    } catch (error) {
      logger.warn(
        { queue, count: back.length, error: String(error) },
        'giving back unstarted deliveries failed; they are recovered when their lease or reservation expires',
      );
    }
  };

  try {
    for (;;) {
      // Nothing more is handed over once aborted: what arrived meanwhile is given back.
      if (signal.aborted) break;
      pump();
      if (maxMessages !== undefined && taken >= maxMessages) break;
      if (running.size >= concurrency || reserver.reserving > 0) {
        await changed.next();
        continue;
      }
      const want = wanted();
      if (want.slots + want.ahead <= 0) {
        await changed.next();
        continue;
      }
      const quiet = Date.now() - lastActivity;
      if (idleMs !== undefined && inFlight === 0 && quiet >= idleMs) break;
      if (!drained) {
        let got: number;
        try {
          got = await reserver.take(want);
          failures = 0;
        } catch (error) {
          if (isFatal(error)) {
            fatal = error;
            break;
          }
          failures += 1;
          logger.warn({ queue, error: String(error) }, 'reserve failed; retrying');
          await pause(reconnectDelayMs(RESERVE_RETRY_BACKOFF, failures), signal);
          continue;
        }
        if (got > 0) {
          reserver.active();
          drained = got < want.slots;
          continue;
        }
      }
      drained = false;
      const waitMs = idleMs === undefined ? pollWaitMs : Math.max(0, Math.min(pollWaitMs, idleMs - quiet));
      try {
        await new Promise<void>((resolve, reject) => {
          endIdle = resolve;
          reserver.idle(waitMs, signal).then(resolve, reject);
        });
      } finally {
        endIdle = undefined;
      }
    }
  } finally {
    open = false;
    if (signal.aborted) await giveBack();
    reserver.markStopped();
    // What is still reserved is handed over (a drain limit); then everything settles.
    while (buffer.length > 0 || inFlight > 0 || reserver.reserving > 0) {
      pump();
      if (buffer.length > 0 || inFlight > 0 || reserver.reserving > 0) await changed.next();
    }
    reserver.detach();
    signal.removeEventListener('abort', wake);
  }
  if (fatal !== undefined) throw fatal;
}
