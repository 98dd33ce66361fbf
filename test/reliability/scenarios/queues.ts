import { silentLogger, type Logger } from '@babelqueue/core';
import { sleep, type BrokerDriver, type DriverTarget } from '../drivers/driver.js';

/** True when every count is zero. */
export const isEmpty = (counts: Record<string, number>) => Object.values(counts).every((n) => n === 0);

/**
 * Polls `driver.leftover(queue)` until everything is gone or `timeoutMs`
 * passes; resolves with the last counts (all zero on success).
 */
export async function waitEmpty(driver: BrokerDriver, target: DriverTarget, queue: string, timeoutMs: number): Promise<Record<string, number>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let counts: Record<string, number>;
    try {
      counts = await driver.leftover(target, queue);
    } catch (error) {
      counts = { unreadable: 1 };
      if (Date.now() > until) throw error;
    }
    if (isEmpty(counts) || Date.now() > until) return counts;
    await sleep(500);
  }
}

/**
 * Polls `driver.leftover(queue)` until everything is gone, giving up only
 * once `stallMs` pass without the count going down: a long backlog is waited
 * for however long it takes while it drains. Resolves with the last counts.
 */
export async function waitDrained(driver: BrokerDriver, target: DriverTarget, queue: string, stallMs: number): Promise<Record<string, number>> {
  let least = Infinity;
  let until = Date.now() + stallMs;
  for (;;) {
    const left = await waitEmpty(driver, target, queue, Math.min(5_000, Math.max(0, until - Date.now())));
    const total = Object.values(left).reduce((sum, n) => sum + n, 0);
    if (total < least) {
      least = total;
      until = Date.now() + stallMs;
    }
    if (isEmpty(left) || Date.now() > until) return left;
  }
}

/**
 * Takes every record off `queue` with the binding itself (a reader: each
 * delivery acked as it is), until the broker says the queue is empty after
 * the reader stopped (a delivery held by a running reader does not show in
 * every broker's counts). Gives up once `stallMs` pass without progress, so a
 * long DLQ (the full size's tens of thousands of records) is read to its end.
 * Resolves with the bodies, in the order they came.
 */
export async function readAll(driver: BrokerDriver, url: string, queue: string, stallMs: number, logger: Logger = silentLogger): Promise<{ bodies: Buffer[]; left: Record<string, number> }> {
  const target: DriverTarget = { url, logger, queue, role: 'reader' };
  const bodies: Buffer[] = [];
  for (;;) {
    const before = bodies.length;
    const transport = driver.transport(target);
    const stop = new AbortController();
    try {
      await transport.connect({ timeoutMs: 60_000 });
      const consuming = transport.consume(queue, async (delivery) => {
        await delivery.settle({ kind: 'ack' });
        bodies.push(delivery.body);
      }, { concurrency: 16, signal: stop.signal });
      consuming.catch(() => undefined);
      await waitDrained(driver, target, queue, stallMs);
      stop.abort();
      await consuming.catch(() => undefined);
    } finally {
      stop.abort();
      await transport.close();
    }
    const left = await waitEmpty(driver, target, queue, 2_000);
    if (isEmpty(left) || bodies.length === before) return { bodies, left };
  }
}

/**
 * Deletes one message of `queue` on purpose, through the binding (taken and
 * settled as a drop: acknowledged with no record): the loss the self-test
 * must see. Resolves with its body.
 */
export async function stealOne(driver: BrokerDriver, url: string, queue: string): Promise<Buffer> {
  const transport = driver.transport({ url, logger: silentLogger, queue, role: 'reader' });
  let stolen: Buffer | undefined;
  try {
    await transport.connect({ timeoutMs: 60_000 });
    await transport.consume(queue, async (delivery) => {
      if (stolen !== undefined) {
        await delivery.settle({ kind: 'unsettled', why: 'the self-test takes only one' });
        return;
      }
      stolen = delivery.body;
      await delivery.settle({ kind: 'drop', why: 'self-test: deleted on purpose' });
    }, { concurrency: 1, maxMessages: 1, signal: new AbortController().signal });
  } finally {
    await transport.close();
  }
  if (stolen === undefined) throw new Error(`self-test: nothing to take off ${queue}`);
  return stolen;
}
