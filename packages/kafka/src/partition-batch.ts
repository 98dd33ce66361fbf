/**
 * What became of one record of a partition batch:
 * - `settled`: done (acknowledged, retried onto a tier, dead-lettered, dropped
 *   or re-injected); its offset may be committed once every earlier one is.
 * - `hold`: not settled (a failing handler without tiers, a failed write, a
 *   retry-topic record not yet due). The partition pauses for `resumeInMs`
 *   and this record is fetched again; nothing at or after it is committed.
 */
export type RecordResult = { readonly kind: 'settled' } | { readonly kind: 'hold'; readonly resumeInMs: number };

/** The kafkajs batch seam the processor drives (a fake in unit tests). */
export interface PartitionBatch<R extends { offset: string }> {
  readonly records: readonly R[];
  /** Marks `offset` consumed: the next fetch starts after it and a commit covers it. */
  resolveOffset(offset: string): void;
  /** Commits every resolved offset of this consumer's current generation. */
  commit(): Promise<void>;
  /** Keeps the group membership alive; throws when the group is rebalancing. */
  heartbeat(): Promise<void>;
  /** Pauses fetching this partition and resumes it after `ms`. */
  pauseFor(ms: number): void;
  /** False once the consumer is stopping, the partition was sought, or a drain limit is reached. */
  mayTake(): boolean;
}

/** Options of {@link processPartitionBatch}. */
export interface BatchPolicy {
  /** Commit at least this often inside a long batch (ms). The batch end always commits. */
  readonly commitIntervalMs: number;
  readonly now?: () => number;
}

/**
 * Process-then-commit over one partition batch, in offset order: each record
 * is handled and settled before the next starts, an offset is resolved only
 * once its record settled (so the committed offset never passes an unsettled
 * record), and commits happen only here, inside the batch callback that owns
 * the partition in the current group generation — never from a timer that
 * could outlive a rebalance. A record that is held pauses the partition and
 * ends the batch; it is fetched again on resume.
 *
 * When the heartbeat reports a rebalance, the settled prefix is committed
 * (still allowed for the generation being rebalanced) and the error is
 * rethrown, so kafkajs rejoins with nothing in flight.
 */
export async function processPartitionBatch<R extends { offset: string }>(
  batch: PartitionBatch<R>,
  handle: (record: R) => Promise<RecordResult>,
  policy: BatchPolicy,
): Promise<void> {
  const now = policy.now ?? Date.now;
  let dirty = false;
  let lastCommit = now();
  const commit = async () => {
    if (!dirty) return;
    dirty = false;
    lastCommit = now();
    await batch.commit();
  };

  for (const record of batch.records) {
    if (!batch.mayTake()) break;
    const result = await handle(record);
    if (result.kind === 'hold') {
      batch.pauseFor(result.resumeInMs);
      break;
    }
    batch.resolveOffset(record.offset);
    dirty = true;
    if (now() - lastCommit >= policy.commitIntervalMs) await commit();
    try {
      await batch.heartbeat();
    } catch (error) {
      await commit().catch(() => undefined);
      throw error;
    }
  }
  await commit();
}
