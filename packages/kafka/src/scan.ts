import { randomUUID } from 'node:crypto';
import { pause, type HeaderValue, type ScannedRecord, type ScanOptions } from '@babelqueue/core';
import type { Admin, IHeaders, Kafka, KafkaMessage } from 'kafkajs';

/** The records of one partition that wait for a consumer group: offsets `start` up to `end`, exclusive. */
export interface WaitingRange {
  readonly partition: number;
  readonly start: number;
  readonly end: number;
}

/** Records a scan buffers ahead of its reader: kafkajs waits while the buffer is full. */
const BUFFER = 500;

/** A scan that sees no record for this long while records should still come fails instead of hanging. */
const STALL_MS = 20_000;

/**
 * What waits on `topic` for the consumer group `groupId`, partition by
 * partition: from the group's committed offset (the log start when it has
 * none, since the binding consumes from the beginning) to the high watermark
 * now. An absent topic has no ranges.
 */
export async function waitingRanges(admin: Admin, topic: string, groupId: string): Promise<WaitingRange[]> {
  if (!(await admin.listTopics()).includes(topic)) return [];
  const offsets = await admin.fetchTopicOffsets(topic);
  const [committed] = await whileCoordinatorMoves(() => admin.fetchOffsets({ groupId, topics: [topic] }));
  const byPartition = new Map((committed?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  return offsets
    .map((p) => {
      const low = Number(p.low);
      const high = Number(p.high);
      const at = byPartition.get(p.partition) ?? -1;
      return { partition: p.partition, start: at < 0 ? low : Math.min(Math.max(at, low), high), end: high };
    })
    .sort((a, b) => a.partition - b.partition);
}

/** How long a read of a group's offsets waits out a coordinator that is loading or moving. */
const COORDINATOR_WAIT_MS = 30_000;
/** kafkajs's names for Kafka's COORDINATOR_LOAD_IN_PROGRESS (14), COORDINATOR_NOT_AVAILABLE (15) and NOT_COORDINATOR (16). */
const COORDINATOR_ERRORS = new Set(['GROUP_LOAD_IN_PROGRESS', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR_FOR_GROUP']);

/**
 * Runs `read` again while Kafka says the group's coordinator is not ready (a
 * broker just started loads its groups; a coordinator can move), up to
 * {@link COORDINATOR_WAIT_MS}: kafkajs's admin gives these up after its own
 * few retries, and a `dlq list` on a fresh Kafka failed on them.
 */
async function whileCoordinatorMoves<T>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + COORDINATOR_WAIT_MS;
  for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2_000)) {
    try {
      return await read();
    } catch (error) {
      if (!coordinatorNotReady(error) || Date.now() + waitMs > deadline) throw error;
      await pause(waitMs);
    }
  }
}

/**
 * A coordinator error as kafkajs throws it: the protocol error itself, the
 * same wrapped as the `cause` of KafkaJSNumberOfRetriesExceeded once its own
 * retries ran out, or a coordinator it could not find at all.
 */
function coordinatorNotReady(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth += 1) {
    const { type, name } = e as { type?: unknown; name?: unknown };
    if ((typeof type === 'string' && COORDINATOR_ERRORS.has(type)) || name === 'KafkaJSGroupCoordinatorNotFound') return true;
  }
  return false;
}

/**
 * Reads the waiting records of `topic` (see {@link waitingRanges}) partition by
 * partition, in offset order, skipping the first `offset` of them, with a
 * consumer of its own: a fresh group that seeks to each range, never commits,
 * and is deleted afterwards, so the work group's offsets never move. Only the
 * current partition is fetched; at most {@link BUFFER} records wait in memory.
 */
export async function* scanTopic(kafka: Kafka, admin: Admin, topic: string, groupId: string, options: ScanOptions): AsyncGenerator<ScannedRecord> {
  const plan = skip(await waitingRanges(admin, topic, groupId), options.offset ?? 0);
  if (plan.length === 0) return;
  let index = options.offset ?? 0;
  const feed = new Feed();
  const scanGroup = `babelqueue-scan-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId: scanGroup, maxWaitTimeInMs: 200, allowAutoTopicCreation: false });
  let current = 0;
  const onAbort = () => feed.end();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) feed.fail(event.payload.error);
    });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const range = plan[current];
        if (range === undefined || batch.partition !== range.partition) return;
        for (const message of batch.messages) {
          const at = Number(message.offset);
          if (at < range.start || at >= range.end) continue;
          await feed.push(record(message, range.partition));
          if (feed.ended) return;
        }
        if (Number(batch.lastOffset()) >= range.end - 1) {
          current += 1;
          const next = plan[current];
          if (next === undefined) {
            feed.end();
            return;
          }
          consumer.pause([{ topic, partitions: [range.partition] }]);
          consumer.seek({ topic, partition: next.partition, offset: String(next.start) });
          consumer.resume([{ topic, partitions: [next.partition] }]);
        }
      },
    });
    const first = plan[0] as WaitingRange;
    const others = plan.slice(1).map((r) => r.partition);
    if (others.length > 0) consumer.pause([{ topic, partitions: others }]);
    consumer.seek({ topic, partition: first.partition, offset: String(first.start) });
    for (;;) {
      const next = await feed.next(STALL_MS, () => `Kafka scan of ${topic}: no record arrived for ${STALL_MS} ms (partition ${plan[current]?.partition})`);
      // An abort ends the scan at once, records already fetched included.
      if (next === undefined || options.signal?.aborted === true) return;
      yield { body: next.body, headers: next.headers, key: next.key, index: index++, location: next.location };
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    feed.end();
    await consumer.disconnect().catch(() => undefined);
    // The group never committed; remove it so scans leave nothing behind.
    await admin.deleteGroups([scanGroup]).catch(() => undefined);
  }
}

/** The ranges with the first `offset` records dropped. */
function skip(ranges: readonly WaitingRange[], offset: number): WaitingRange[] {
  const out: WaitingRange[] = [];
  let left = offset;
  for (const range of ranges) {
    const size = range.end - range.start;
    if (left >= size) {
      left -= size;
      continue;
    }
    out.push({ ...range, start: range.start + left });
    left = 0;
  }
  return out;
}

interface Item {
  readonly body: Buffer;
  readonly headers: Record<string, HeaderValue>;
  readonly key: Buffer | null;
  readonly location: string;
}

function record(message: KafkaMessage, partition: number): Item {
  return {
    body: message.value ?? Buffer.alloc(0),
    headers: plainHeaders(message.headers),
    key: message.key ?? null,
    location: `partition ${partition}, offset ${message.offset}`,
  };
}

function plainHeaders(headers: IHeaders | undefined): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = first === null ? null : first.toString();
  }
  return out;
}

/** A bounded hand-over from kafkajs' push to the scan's pull. */
class Feed {
  private readonly items: Item[] = [];
  private wakeReader: (() => void) | undefined;
  private wakeWriter: (() => void) | undefined;
  private error: unknown;
  ended = false;

  async push(item: Item): Promise<void> {
    if (this.ended) return;
    this.items.push(item);
    this.wakeReader?.();
    while (this.items.length >= BUFFER && !this.ended) await new Promise<void>((resolve) => (this.wakeWriter = resolve));
  }

  end(): void {
    this.ended = true;
    this.wakeReader?.();
    this.wakeWriter?.();
  }

  fail(error: unknown): void {
    this.error ??= error;
    this.end();
  }

  /** The next item; undefined once ended and empty. Rejects after `stallMs` without one. */
  async next(stallMs: number, why: () => string): Promise<Item | undefined> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        if (this.items.length < BUFFER) this.wakeWriter?.();
        return item;
      }
      if (this.error !== undefined) throw this.error;
      if (this.ended) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const arrived = await new Promise<boolean>((resolve) => {
        this.wakeReader = () => resolve(true);
        timer = setTimeout(() => resolve(false), stallMs);
      });
      clearTimeout(timer);
      this.wakeReader = undefined;
      if (!arrived) throw new Error(why());
    }
  }
}
