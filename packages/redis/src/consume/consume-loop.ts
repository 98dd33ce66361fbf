import type { ConsumeOptions, Delivery, Logger } from '@babelqueue/core';
import { isFatal } from '../errors.js';
import { MAX_BATCH, readAhead } from './read-ahead.js';
import { NOTHING, type Reserved, type Reserver, type Want } from './reserver.js';
import { Notifier } from './signal.js';
import { sleep } from './wait.js';

/**
 * The consume loop of one queue: keeps at most `concurrency` deliveries in
 * flight and, while the queue is deep, a read-ahead of reserved ones waiting
 * for a slot ({@link readAhead}); one script call reserves for every free slot
 * and the read-ahead at once (at most {@link MAX_BATCH}), the acks of finished
 * deliveries riding along. A delivery's reservation counts from the reserve
 * and is renewed while the loop runs, handed over or not. On a drain limit it
 * stops reserving (it never reserves past `maxMessages`) and hands over what it
 * holds; on abort it stops reserving, gives the read-ahead back to the head of
 * the ready list (or, when that call fails, leaves it to expire and be
 * recovered), and waits until every delivery in flight has settled.
 * CROSSSLOT and WRONGTYPE end it with the error; other Redis errors are
 * logged and retried with a back-off.
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
  const delivered = new Notifier();
  const settled = new Notifier();
  // An abort wakes the waits below. (Racing a never-settling abort promise in
  // every wait would pile one reaction per wait onto it until the loop ends.)
  const wake = () => {
    settled.fire();
    delivered.fire();
  };
  signal.addEventListener('abort', wake, { once: true });
  let inFlight = 0;
  let taken = 0;
  let lastActivity = Date.now();
  let running = true;
  let failures = 0;
  let fatal: unknown;

  const left = () => (maxMessages === undefined ? Infinity : maxMessages - taken - buffer.length - reserver.reserving);
  const ahead = readAhead(concurrency);
  /**
   * What to reserve once `acking` in-flight deliveries complete: the free
   * slots and the read-ahead, less what is held or already asked for.
   */
  const wanted = (acking: number): Want => {
    const room = Math.min(left(), MAX_BATCH);
    const held = inFlight - acking + buffer.length + reserver.reserving;
    const slots = Math.max(0, Math.min(concurrency - held, room));
    return { slots, ahead: Math.max(0, Math.min(concurrency + ahead - held, room) - slots) };
  };
  reserver.attach({
    busy: () => inFlight,
    demand: (acking) => (running && !signal.aborted ? wanted(acking) : NOTHING),
    deliver: (deliveries) => {
      buffer.push(...deliveries);
      delivered.fire();
    },
  });

  const hand = (delivery: Delivery) => {
    taken += 1;
    inFlight += 1;
    lastActivity = Date.now();
    onDelivery(delivery)
      .catch((error: unknown) => logger.error({ queue, error: String(error) }, 'delivery handling failed; the message stays reserved'))
      .finally(() => {
        inFlight -= 1;
        lastActivity = Date.now();
        settled.fire();
      });
  };
  const pump = () => {
    while (buffer.length > 0 && inFlight < concurrency) hand(buffer.shift()!);
  };

  /** On abort: once no reserve is in flight, the read-ahead goes back; when that fails it expires and is recovered. */
  const giveBack = async () => {
    while (reserver.reserving > 0) await Promise.race([settled.next(), delivered.next()]);
    if (buffer.length === 0) return;
    const back = buffer.splice(0);
    try {
      await reserver.giveBack(back);
    } catch (error) {
      logger.warn(
        { queue, count: back.length, error: String(error) },
        'giving back unstarted deliveries failed; they are recovered when their reservation expires',
      );
    }
  };

  try {
    for (;;) {
      // Nothing more is handed over once aborted: what arrived meanwhile is given back.
      if (signal.aborted) break;
      pump();
      if (maxMessages !== undefined && taken >= maxMessages) break;
      if (inFlight >= concurrency || reserver.reserving > 0) {
        await Promise.race([settled.next(), delivered.next()]);
        continue;
      }
      const want = wanted(0);
      if (want.slots + want.ahead <= 0) {
        await Promise.race([settled.next(), delivered.next()]);
        continue;
      }
      const quiet = Date.now() - lastActivity;
      if (idleMs !== undefined && inFlight === 0 && quiet >= idleMs) break;
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
        await sleep(Math.min(1000, 50 * 2 ** failures), signal);
        continue;
      }
      if (got > 0) {
        reserver.active();
        continue;
      }
      const waitMs = idleMs === undefined ? pollWaitMs : Math.max(0, Math.min(pollWaitMs, idleMs - quiet));
      await Promise.race([reserver.idle(waitMs, signal), delivered.next()]);
    }
  } finally {
    running = false;
    if (signal.aborted) await giveBack();
    reserver.markStopped();
    // What is still reserved is handed over (a drain limit); then everything settles.
    while (buffer.length > 0 || inFlight > 0 || reserver.reserving > 0) {
      pump();
      if (buffer.length > 0 || inFlight > 0 || reserver.reserving > 0) await Promise.race([settled.next(), delivered.next()]);
    }
    reserver.detach();
    signal.removeEventListener('abort', wake);
  }
  if (fatal !== undefined) throw fatal;
}
