import { pause, reconnectDelayMs, type Logger, type ResolvedReconnectBackoff } from '@babelqueue/core';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { processPartitionBatch, type Ordering, type RecordResult } from './partition-batch.js';
import { RangeAssigner } from './range-assigner.js';
import { Slots } from './slots.js';
import { isMetadataLag } from './topics.js';
import { isFatalKafkaError } from './fatal-errors.js';

/** Tuning shared by the work consumer and the re-inject consumer. */
export interface ConsumerTuning {
  /** Longest fetch long-poll (ms); also bounds how late a resumed partition is fetched again. */
  readonly maxWaitTimeMs: number;
  /** Commit at least this often inside a long batch (ms); every batch end commits. */
  readonly commitIntervalMs: number;
  /** Group session timeout (ms); a crashed member's partitions move after this. */
  readonly sessionTimeoutMs: number;
}

/** One kafkajs consumer group run over some topics until `signal` aborts. */
export interface ConsumerLoop extends ConsumerTuning {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Records in flight at most, across all partitions. */
  readonly concurrency: number;
  /** Which records of one partition may be in flight together. */
  readonly ordering: Ordering;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Handles one record; never throws. */
  handle(record: KafkaMessage, topic: string, partition: number): Promise<RecordResult>;
  /** Extra gate before each record (drain limits). */
  mayTake?(): boolean;
  /** Called after each (re)join with this member's assignment. */
  onJoin?(assignment: Record<string, number[]>): void;
  /** Called when the member leaves its group: a crash (restarted or not) or a disconnect. */
  onLeave?(): void;
}

/** The pause before starting a stopped consumer again: 500 ms doubling, at most 15 s; a join resets it. */
const RESTART_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 500, maxDelayMs: 15_000, multiplier: 2 });

/**
 * Runs a consumer group with manual commits (autoCommit off, no auto-resolve)
 * and process-then-commit per partition, until the signal aborts. Then it
 * stops taking records, lets in-flight records settle and commit, leaves the
 * group and disconnects.
 *
 * kafkajs restarts its consumer after most failures, but not after those it
 * calls non-retriable, among them the group coordinator look-up that fails
 * while the broker restarts. Such a consumer is started again here, after a
 * doubling pause, and a WARN says why; its uncommitted records are delivered
 * again. Rejects only when the first connect fails (the broker cannot be
 * reached at start) or on an error no retry can cure (isFatalKafkaError).
 */
export async function runConsumerLoop(loop: ConsumerLoop): Promise<void> {
  let restarts = 0;
  for (let first = true; !loop.signal.aborted; first = false) {
    try {
      await runConsumer(loop, first, () => (restarts = 0));
      return;
    } catch (error) {
      if (loop.signal.aborted) return;
      if (error instanceof FirstConnectError) throw error.cause;
      if (isFatalKafkaError(error)) throw error;
      restarts += 1;
      const pauseMs = reconnectDelayMs(RESTART_BACKOFF, restarts);
      loop.logger.warn({ groupId: loop.groupId, error: describe(error), restartInMs: pauseMs }, 'Kafka consumer stopped and kafkajs will not restart it; starting it again');
      await pause(pauseMs, loop.signal);
    }
  }
}

/** The first connect of a loop failed: the broker cannot be reached at start, which run() reports. */
class FirstConnectError extends Error {
  constructor(override readonly cause: unknown) {
    super(describe(cause));
  }
}

/**
 * One consumer's life: resolves when the signal aborts, rejects when the
 * consumer stops for good (a crash kafkajs does not restart from). `joined`
 * is called each time it joins its group.
 */
async function runConsumer(loop: ConsumerLoop, first: boolean, joined: () => void): Promise<void> {
  const heartbeatEveryMs = Math.max(100, Math.floor(loop.sessionTimeoutMs / 10));
  let stopping = false;
  const consumer = loop.kafka.consumer({
    groupId: loop.groupId,
    maxWaitTimeInMs: loop.maxWaitTimeMs,
    sessionTimeout: loop.sessionTimeoutMs,
    heartbeatInterval: heartbeatEveryMs,
    allowAutoTopicCreation: true,
    partitionAssigners: [RangeAssigner],
    // kafkajs restarts a crashed consumer on a timer of its own, decided after
    // its crash handler's disconnect; a stop that lands during that disconnect
    // shares it and returns, and the restart would then run a consumer nobody
    // disconnects. No restart once this loop stops (kafkajs's default retries kept).
    retry: { retries: 5, restartOnFailure: () => Promise.resolve(!stopping) },
  });
  const timers = new Set<NodeJS.Timeout>();
  const slots = new Slots(loop.concurrency);
  /** Per partition: offsets settled past a held record (see BatchPolicy.settledAhead). */
  const ahead = new Map<string, Set<string>>();
  const aheadOf = (topic: string, partition: number) => {
    const key = `${topic}\u0000${partition}`;
    let set = ahead.get(key);
    if (set === undefined) ahead.set(key, (set = new Set()));
    return set;
  };
  /** A consumer back after this loop stopped (a restart begun before it): disconnect it again. */
  const stopAgain = () => void consumer.disconnect().catch(() => undefined);
  let crashed: ((error: unknown) => void) | undefined;
  const crash = new Promise<never>((_resolve, reject) => {
    crashed = reject;
  });
  crash.catch(() => undefined);

  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    if (stopping) return stopAgain();
    const assigned = event.payload.memberAssignment;
    // A revoked partition's new owner handles its uncommitted records; forget them here.
    for (const key of ahead.keys()) {
      const [topic = '', partition = ''] = key.split('\u0000');
      if (!(assigned[topic] ?? []).includes(Number(partition))) ahead.delete(key);
    }
    joined();
    loop.onJoin?.(assigned);
  });
  consumer.on(consumer.events.DISCONNECT, () => loop.onLeave?.());
  consumer.on(consumer.events.CRASH, (event) => {
    loop.onLeave?.();
    const { error, restart } = event.payload;
    if (restart) {
      loop.logger.warn({ groupId: loop.groupId, error: describe(error) }, 'Kafka consumer crashed; kafkajs restarts it');
    } else {
      crashed?.(error);
    }
  });

  const eachBatch = async (payload: EachBatchPayload) => {
    const { batch } = payload;
    // A batch goes stale when the consumer seeks its partition. Only consumer.seek()
    // does that, and this consumer never leaves this function and never seeks, so
    // it is asked once per batch (kafkajs builds a JSON key for each call).
    if (payload.isStale()) return;
    if (stopping) return stopAgain();
    await processPartitionBatch(
      {
        records: batch.messages,
        resolveOffset: (offset) => payload.resolveOffset(offset),
        commit: () => payload.commitOffsetsIfNecessary(payload.uncommittedOffsets()),
        heartbeat: () => payload.heartbeat(),
        pauseFor: (ms) => {
          const resume = payload.pause();
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (!stopping) resume();
          }, ms);
          timers.add(timer);
        },
        mayTake: () => !stopping && payload.isRunning() && (loop.mayTake?.() ?? true),
      },
      (record) => loop.handle(record, batch.topic, batch.partition),
      {
        commitIntervalMs: loop.commitIntervalMs,
        ordering: loop.ordering,
        slots,
        settledAhead: aheadOf(batch.topic, batch.partition),
        heartbeatEveryMs,
      },
    );
  };

  try {
    await consumer.connect().catch((error: unknown) => {
      throw first ? new FirstConnectError(error) : error;
    });
    for (const topic of loop.topics) await subscribeWhenThere(consumer, topic, loop);
    if (loop.signal.aborted) return;
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: loop.concurrency,
      eachBatch,
    });
    await Promise.race([aborted(loop.signal), crash]);
  } finally {
    stopping = true;
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    await consumer.disconnect().catch((error: unknown) =>
      loop.logger.warn({ groupId: loop.groupId, error: describe(error) }, 'Kafka consumer did not disconnect cleanly'));
  }
}

/** How often a consumer waiting for a missing topic asks again, and how often it says so. */
const TOPIC_POLL_MS = 500;
const TOPIC_WARN_EVERY_MS = 10_000;

/**
 * Subscribes to `topic`, waiting while the cluster does not host it yet (a
 * topic nobody created, or one just created whose metadata has not reached
 * this broker): the worker starts and waits instead of crashing, and says so
 * in a warning every ten seconds. Returns early when the signal aborts.
 */
async function subscribeWhenThere(consumer: Consumer, topic: string, loop: ConsumerLoop): Promise<void> {
  let warnedAt = 0;
  while (!loop.signal.aborted) {
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      return;
    } catch (error) {
      if (!isMetadataLag(error)) throw error;
      if (Date.now() - warnedAt >= TOPIC_WARN_EVERY_MS) {
        warnedAt = Date.now();
        loop.logger.warn({ groupId: loop.groupId, topic, error: describe(error) }, 'Kafka topic not there yet; waiting for it (createTopics creates it)');
      }
      await pause(TOPIC_POLL_MS, loop.signal);
    }
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** An error as a short text for a log line. */
export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
