import type { Slots } from './slots.js';

/**
 * What became of one record of a partition batch:
 * - `settled`: done (acknowledged, retried onto a tier, dead-lettered, dropped
 *   or re-injected); its offset is committed once every earlier one is.
 * - `hold`: not settled (a failing handler without tiers, a failed write, a
 *   retry-topic record not yet due). The partition pauses for `resumeInMs`
 *   and the record is fetched again; nothing at or after it is committed.
 */
export type RecordResult = { readonly kind: 'settled' } | { readonly kind: 'hold'; readonly resumeInMs: number };

/** The one `settled` result (immutable, so shared rather than made per record). */
export const SETTLED: RecordResult = Object.freeze({ kind: 'settled' });

/**
 * Which records of one partition may be in flight together:
 * - `partition`: one at a time, in offset order (Kafka's partition order);
 * - `key`: records with the same key one at a time, in offset order; records
 *   with different keys (and null keys) in parallel;
 * - `none`: any records in parallel.
 * In every mode a commit never passes a record that is not settled.
 */
export type Ordering = 'partition' | 'key' | 'none';

/** The kafkajs batch seam the processor drives (a fake in unit tests). */
export interface PartitionBatch<R extends { offset: string; key?: Buffer | null }> {
  readonly records: readonly R[];
  /** Marks `offset` (and every earlier one) consumed: the next fetch starts after it and a commit covers it. */
  resolveOffset(offset: string): void;
  /** Commits every resolved offset of this consumer's current generation. */
  commit(): Promise<void>;
  /** Keeps the group membership alive; throws when the group is rebalancing. */
  heartbeat(): Promise<void>;
  /** Pauses fetching this partition and resumes it after `ms`. */
  pauseFor(ms: number): void;
  /** False once the consumer is stopping or a drain limit is reached. */
  mayTake(): boolean;
}

/** How {@link processPartitionBatch} runs one batch. */
export interface BatchPolicy {
  /** Commit at least this often inside a long batch (ms). The batch end always commits. */
  readonly commitIntervalMs: number;
  readonly ordering: Ordering;
  /** Shared by every partition of one consume loop: caps the records in flight. */
  readonly slots: Slots;
  /**
   * This partition's offsets that settled while an earlier record was held:
   * they cannot be committed yet and are skipped, not handled again, when
   * the partition is fetched again. Kept by the caller across batches.
   */
  readonly settledAhead: Set<string>;
  /**
   * The consumer's heartbeat interval (ms): while records are in flight a timer
   * heartbeats this often, so a slow handler keeps the membership; between
   * records kafkajs is asked every tenth of it (it sends one only once the
   * interval has passed, so asking after every record buys nothing).
   */
  readonly heartbeatEveryMs: number;
  readonly now?: () => number;
}

/**
 * Process-then-commit over one partition batch. Records start in offset order
 * within the ordering's limits and the shared slots; an offset is resolved
 * only once its record and every earlier record of the partition settled, so
 * the committed offset never passes an unsettled record. Resolving waits for
 * the next commit (one resolveOffset per commit, not per record). Commits happen only
 * here, inside the batch callback that owns the partition in the current group
 * generation, never from a timer that could outlive a rebalance. A held
 * record pauses the partition; it (and, under `partition`/`key` ordering,
 * what must follow it) is fetched and handled again on resume.
 *
 * When the heartbeat reports a rebalance, no more records start, the ones in
 * flight finish, the settled prefix is committed (still allowed for the
 * generation being rebalanced) and the error is rethrown, so kafkajs rejoins
 * with nothing in flight.
 */
export async function processPartitionBatch<R extends { offset: string; key?: Buffer | null }>(
  batch: PartitionBatch<R>,
  handle: (record: R) => Promise<RecordResult>,
  policy: BatchPolicy,
): Promise<void> {
  const now = policy.now ?? Date.now;
  const { records } = batch;
  const results: (RecordResult | undefined)[] = new Array<RecordResult | undefined>(records.length);
  const settled = (r: RecordResult | undefined) => r !== undefined && r.kind === 'settled';
  /** records[0, next) settled: the prefix a commit may cover. */
  let next = 0;
  /** records[0, resolved) told to kafkajs (resolveOffset); it lags `next` until the next commit. */
  let resolved = 0;
  let lastCommit = now();
  let lastBeat = now();
  const beatCheckMs = policy.heartbeatEveryMs / 10;
  let failure: { error: unknown } | undefined;
  let committing: Promise<void> | undefined;
  let holdMs: number | undefined;

  const advance = () => {
    while (next < records.length && settled(results[next])) {
      if (policy.settledAhead.size > 0) policy.settledAhead.delete(records[next]!.offset);
      next += 1;
    }
  };
  /**
   * Resolves the settled prefix with one resolveOffset (its last offset covers
   * every earlier one), only right before a commit: nothing else reads resolved
   * offsets while the batch runs (kafkajs fetches this partition again only
   * after the batch returns, and autoCommit is off). False when nothing is new.
   */
  const resolvePrefix = (): boolean => {
    if (resolved === next) return false;
    resolved = next;
    batch.resolveOffset(records[next - 1]!.offset);
    return true;
  };
  const commit = (): Promise<void> => {
    committing ??= (async () => {
      while (resolvePrefix()) {
        lastCommit = now();
        await batch.commit();
      }
    })().finally(() => {
      committing = undefined;
    });
    return committing;
  };

  /** Handles record `i` (or skips it when it settled before); resolves with whether it settled. */
  const run = async (i: number): Promise<boolean> => {
    const record = records[i]!;
    if (policy.settledAhead.size > 0 && policy.settledAhead.has(record.offset)) {
      results[i] = SETTLED;
      advance();
      return true;
    }
    if (!policy.slots.tryAcquire()) await policy.slots.acquire();
    try {
      if (failure !== undefined || !batch.mayTake()) return false;
      const result = await handle(record);
      results[i] = result;
      if (result.kind === 'hold') {
        holdMs = Math.min(holdMs ?? Infinity, result.resumeInMs);
        return false;
      }
      advance();
      const t = now();
      if (t - lastCommit >= policy.commitIntervalMs) await commit();
      if (t - lastBeat >= beatCheckMs) {
        // Also how a rebalance is seen while a batch of quick records runs (the timer waits for the event loop).
        lastBeat = t;
        await batch.heartbeat();
      }
      return true;
    } catch (error) {
      failure ??= { error };
      return false;
    } finally {
      policy.slots.release();
    }
  };

  const beat = setInterval(() => {
    batch.heartbeat().catch((error: unknown) => {
      failure ??= { error };
    });
  }, policy.heartbeatEveryMs);
  try {
    if (policy.ordering === 'partition') {
      // One chain for the whole partition: a plain loop, stopping at the first record that does not settle.
      for (let i = 0; i < records.length && (await run(i)); i++);
    } else {
      const chains = new Map<string, Promise<boolean>>();
      const tasks: Promise<boolean>[] = [];
      for (const [i, record] of records.entries()) {
        const chain = policy.ordering === 'key' ? keyChain(record) : undefined;
        const before = chain === undefined ? undefined : chains.get(chain);
        const task = before === undefined ? run(i) : before.then((ok) => ok && run(i));
        if (chain !== undefined) chains.set(chain, task);
        tasks.push(task);
      }
      await Promise.all(tasks);
    }
  } finally {
    clearInterval(beat);
  }

  for (let i = next; i < records.length; i++) {
    if (settled(results[i])) policy.settledAhead.add(records[i]!.offset);
  }
  if (holdMs !== undefined) batch.pauseFor(holdMs);
  try {
    await commit();
  } catch (error) {
    failure ??= { error };
  }
  if (failure !== undefined) throw failure.error;
}

/** Under `key` ordering, the chain of records a record waits on: its key (a null key waits on nothing). */
function keyChain(record: { key?: Buffer | null }): string | undefined {
  return record.key === null || record.key === undefined ? undefined : record.key.toString('latin1');
}
