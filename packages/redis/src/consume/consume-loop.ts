import type { ConsumeOptions, Delivery, Logger } from '@babelqueue/core';
import { isFatal } from '../errors.js';
import type { Reserver } from './reserver.js';
import { aborted, Notifier } from './signal.js';
import { sleep } from './wait.js';

/**
 * The consume loop of one queue: keeps at most `concurrency` deliveries in
 * flight, reserves as many as there are free slots in one script call (acks
 * of finished deliveries ride along), and on abort or a drain limit stops
 * reserving, hands over what is already reserved, and waits until every
 * delivery has settled. CROSSSLOT and WRONGTYPE end it with the error; other
 * Redis errors are logged and retried with a back-off.
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
  const buffer: Delivery[] = [];
  const delivered = new Notifier();
  const settled = new Notifier();
  const stop = aborted(signal);
  let inFlight = 0;
  let taken = 0;
  let lastActivity = Date.now();
  let running = true;
  let failures = 0;
  let fatal: unknown;

  const left = () => (maxMessages === undefined ? Infinity : maxMessages - taken - buffer.length - reserver.reserving);
  reserver.attach({
    busy: () => inFlight,
    demand: (acking) =>
      running && !signal.aborted
        ? Math.max(0, Math.min(concurrency - (inFlight - acking) - buffer.length - reserver.reserving, left()))
        : 0,
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

  try {
    for (;;) {
      pump();
      if (signal.aborted || (maxMessages !== undefined && taken >= maxMessages)) break;
      if (inFlight >= concurrency || reserver.reserving > 0) {
        await Promise.race([settled.next(), delivered.next(), stop]);
        continue;
      }
      const want = Math.min(concurrency - inFlight, left());
      if (want <= 0) {
        await Promise.race([settled.next(), delivered.next(), stop]);
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
    // What is reserved is handed over; then everything settles.
    while (buffer.length > 0 || inFlight > 0 || reserver.reserving > 0) {
      pump();
      if (buffer.length > 0 || inFlight > 0 || reserver.reserving > 0) await Promise.race([settled.next(), delivered.next()]);
    }
    reserver.detach();
  }
  if (fatal !== undefined) throw fatal;
}
