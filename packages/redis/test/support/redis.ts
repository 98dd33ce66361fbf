import { Redis } from 'ioredis';
import { EnvelopeCodec } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { captureLogger } from '../../../../test/support/capture-logger.js';
import { RedisTransport, type RedisTransportOptions } from '../../src/index.js';

export { broker, uniqueQueue } from '../../../../test/support/brokers.js';

export { captureLogger, type LogLine } from '../../../../test/support/capture-logger.js';

/** A canonical envelope body for `urn`, with `attempts` set. */
export function envelopeBody(urn: string, data: Record<string, unknown> = {}, attempts = 0, queue = 'default'): Buffer {
  const env = EnvelopeCodec.make(urn, data as never, { queue });
  return Buffer.from(EnvelopeCodec.encode({ ...env, attempts }), 'utf8');
}

const opened = new Set<RedisTransport | Redis>();

/** Registers a transport or client for {@link closeTransports}; returns it. */
export function track<T extends RedisTransport | Redis>(closable: T): T {
  opened.add(closable);
  return closable;
}

/** A transport on the test broker with a recording logger; {@link closeTransports} closes it whatever the test did. */
export function transport(url: string, options: RedisTransportOptions = {}) {
  const logger = captureLogger();
  const t = track(new RedisTransport({ url, logger, ...options }));
  return { t, logger };
}

/**
 * Closes every transport and client {@link track} registered (both close
 * idempotently). Run it in `afterEach`: a failed assertion then never leaves a
 * connection open that would keep the file alive until the runner's timeout.
 */
export async function closeTransports(): Promise<void> {
  const all = [...opened];
  opened.clear();
  // Transports first: one may use a tracked client.
  await Promise.allSettled(all.filter((c) => c instanceof RedisTransport).map((t) => t.close()));
  await Promise.allSettled(all.filter((c): c is Redis => !(c instanceof RedisTransport)).map((c) => (c.status === 'end' ? undefined : c.quit())));
}

/** Makes every member of a sorted set due now: the clock moved through its scores instead of waiting for them. */
export async function dueNow(redis: Redis, key: string): Promise<void> {
  for (const [member] of await withScores(redis, key)) await redis.zadd(key, 'XX', now() - 1, member);
}

/**
 * Reserves deliveries of `queue` with the transport directly (no runtime) and
 * hands them to `each`; stops after `max` or once idle for `idleMs`.
 */
export async function take(
  t: RedisTransport,
  queue: string,
  each: (d: Delivery) => Promise<void> = async () => {},
  { max = 1, idleMs = 1500, concurrency = 1 }: { max?: number; idleMs?: number; concurrency?: number } = {},
): Promise<Delivery[]> {
  const got: Delivery[] = [];
  await t.consume(queue, async (d) => {
    got.push(d);
    await each(d);
  }, { concurrency, signal: new AbortController().signal, maxMessages: max, idleMs });
  return got;
}

/** A plain client for looking at keys. */
export function inspector(url: string): Redis {
  return new Redis(url);
}

/** Whole epoch seconds now. */
export function now(): number {
  return Math.floor(Date.now() / 1000);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `ZRANGE key 0 -1 WITHSCORES` as [member, score] pairs (members as Buffers). */
export async function withScores(redis: Redis, key: string): Promise<[Buffer, string][]> {
  // ioredis 6 already pairs the reply up; older versions return it flat.
  const reply = (await redis.callBuffer('ZRANGE', key, 0, -1, 'WITHSCORES')) as (Buffer | [Buffer, Buffer])[];
  if (reply.every((x) => Array.isArray(x))) return (reply as [Buffer, Buffer][]).map(([m, s]) => [m, s.toString()]);
  const flat = reply as Buffer[];
  const out: [Buffer, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!.toString()]);
  return out;
}

/** `ZADD key score member [score member …]`. */
export async function zadd(redis: Redis, key: string, ...pairs: (string | number | Buffer)[]): Promise<void> {
  await redis.call('ZADD', key, ...pairs);
}

export { until } from '../../../../test/support/until.js';
