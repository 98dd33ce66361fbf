/**
 * Queue depth on the Redis zset layout: the App's publish and consume cost
 * per message on an empty queue, behind 10^6 ready messages, and beside 10^6
 * delayed ones. The backlog is written raw, in the layout's own keys and
 * member format (packages/redis/src/keys.ts, lua/zset-push.lua): the
 * envelope on `queues:<q>` with one `1` on `:notify` each, or the envelope in
 * `:delayed` scored a day out (so none falls due during the run), pipelined
 * 10,000 at a time.
 */
import { Redis } from 'ioredis';
import { createApp, EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import { timed, type Sample } from '../support/measure.js';
import { benchQueue, DATA, URN, windowed } from '../support/workload.js';

export type Backlog = 'empty' | 'ready' | 'delayed';

export interface DepthRow {
  backlog: Backlog;
  depth: number;
  loadSeconds: number;
  publish: Sample;
  consume: Sample;
}

const CHUNK = 10_000;
const CONCURRENCY = 16;

/**
 * `count` distinct envelopes for `queue`, from one template: the last 12 hex
 * digits of meta.id are the index, so every body is unique (the reserve
 * script holds back a byte-identical twin of one in flight) and still a v4 id.
 */
function* envelopes(queue: string, count: number): Generator<string[]> {
  const envelope = EnvelopeCodec.make(URN, DATA, { queue });
  const text = EnvelopeCodec.encode(envelope);
  const at = text.indexOf(envelope.meta.id) + envelope.meta.id.length - 12;
  const [head, tail] = [text.slice(0, at), text.slice(at + 12)];
  for (let from = 0; from < count; from += CHUNK) {
    yield Array.from({ length: Math.min(CHUNK, count - from) }, (_, k) => head + (from + k).toString(16).padStart(12, '0') + tail);
  }
}

async function load(redis: Redis, queue: string, backlog: Backlog, depth: number): Promise<number> {
  if (backlog === 'empty') return 0;
  const started = performance.now();
  const ready = `queues:${queue}`;
  const dueAt = Math.floor(Date.now() / 1000) + 86_400;
  let pending: Promise<unknown>[] = [];
  for (const chunk of envelopes(queue, depth)) {
    pending.push(
      backlog === 'ready'
        ? redis.pipeline().rpush(ready, ...chunk).rpush(`${ready}:notify`, ...chunk.map(() => '1')).exec()
        : redis.zadd(`${ready}:delayed`, ...chunk.flatMap((member) => [dueAt, member])),
    );
    // A few chunks in flight: Redis is kept busy without the client buffering the whole backlog.
    if (pending.length >= 4) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  return (performance.now() - started) / 1000;
}

/** One row: the backlog loaded, then `messages` published and `messages` consumed through the App at concurrency 16. */
export async function depthRow(url: string, backlog: Backlog, depth: number, messages: number): Promise<DepthRow> {
  const redis = new Redis(url);
  const queue = benchQueue(`scale-depth-${backlog}`);
  try {
    const loadSeconds = await load(redis, queue, backlog, depth);
    const transport = new RedisTransport({ url, layout: 'zset', logger: silentLogger });
    const app = createApp({ transport, queue, logger: silentLogger }).handle(URN, () => undefined);
    await transport.connect({ timeoutMs: 10_000 });
    const publish = await timed(messages, () => windowed(messages, CONCURRENCY, (i) => app.publish(URN, { ...DATA, i })));
    // Behind a ready backlog the App takes from its head: `messages` of the backlog, not the ones just published.
    const consume = await timed(messages, async () => {
      const handled = await app.consume({ concurrency: CONCURRENCY, maxMessages: messages, idleMs: 5000 });
      if (handled !== messages) throw new Error(`consumed ${handled} of ${messages}`);
    });
    await app.close();
    return { backlog, depth: backlog === 'empty' ? 0 : depth, loadSeconds: Math.round(loadSeconds * 10) / 10, publish, consume };
  } finally {
    const keys = await redis.keys(`*${queue}*`);
    if (keys.length > 0) await redis.unlink(...keys);
    await redis.quit();
  }
}
