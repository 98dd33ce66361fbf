/**
 * The work every broker bench does, on both sides alike: the same message
 * (one URN, a small order, about 330 bytes as an envelope), made and encoded
 * per message as the App does, on queues of the bench's own, with a bounded
 * number of sends in flight; the App side handles it with a no-op handler.
 */
import { createApp, EnvelopeCodec, silentLogger, type App, type Transport } from '@babelqueue/core';
import { envelopeProjection } from '@babelqueue/core/binding';

export const URN = 'urn:babel:orders:created';
export const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };

/** Message `i` for `queue` as the App makes it: the envelope, its bytes and its projection. */
export function encoded(queue: string, i: number) {
  const envelope = EnvelopeCodec.make(URN, { ...DATA, i }, { queue });
  return { envelope, body: Buffer.from(EnvelopeCodec.encode(envelope)), projection: envelopeProjection(envelope) };
}

/** The App as the benches measure it: on `transport` and `queue`, a no-op handler for URN, no logging. */
export function benchApp(transport: Transport, queue: string) {
  return createApp({ transport, queue, logger: silentLogger }).handle(URN, () => undefined);
}

let made = 0;
/** A queue name no other run or measurement uses: `bq-bench-<label>-<pid>-<time>-<n>`. */
export const benchQueue = (label: string) => `bq-bench-${label}-${process.pid}-${Date.now().toString(36)}-${made++}`;

/** Publishes `count` messages (`i` from 0) through `app.publishMany`, `batch` at a time, one batch after the other. */
export async function publishInBatches(app: Pick<App, 'publishMany'>, count: number, batch: number): Promise<void> {
  for (let i = 0; i < count; i += batch) {
    await app.publishMany(URN, Array.from({ length: Math.min(batch, count - i) }, (_, k) => ({ ...DATA, i: i + k })));
  }
}

/** Runs `task(i)` for i < count with at most `window` in flight. */
export async function windowed(count: number, window: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(window, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** How long a worker may go without a message before {@link runUntilHandled} gives up. */
const RUN_IDLE_MS = 10_000;

/**
 * A worker (`app.run` at `concurrency`, the no-op handler) on `transport` and
 * `queue`, filled beforehand, stopped once it handled `count` messages; one
 * that gets nothing for 10 s fails the run instead of waiting for ever.
 */
export async function runUntilHandled(transport: Transport, queue: string, count: number, concurrency: number): Promise<void> {
  const stop = new AbortController();
  let handled = 0;
  const worker = createApp({ transport, queue, logger: silentLogger }).handle(URN, () => {
    if (++handled === count) stop.abort();
  });
  let seen = -1;
  const watch = setInterval(() => {
    if (handled === seen) stop.abort();
    seen = handled;
  }, RUN_IDLE_MS);
  try {
    await worker.run({ signal: stop.signal, concurrency });
  } finally {
    clearInterval(watch);
  }
  if (handled < count) throw new Error(`App run: nothing for ${RUN_IDLE_MS} ms after ${handled} of ${count}`);
}
