import { drainQueue, type Delivery, type Transport } from '@babelqueue/core';
import { recordHash } from './records.js';
import { ridersOf } from './redrive-plan.js';

/** What {@link takeAndDelete} did. */
export interface TakeAndDeleteResult {
  /** Fingerprints deleted, one entry per record. */
  readonly deleted: string[];
  /** Records taken ahead of a deleted one and written back to the tail of the DLQ. */
  readonly restored: number;
  /** Records taken after the last deleted one and handed back unsettled (they stay in place). */
  readonly released: number;
}

/**
 * Deletes records from a DLQ on a broker that cannot delete from the middle of
 * a queue (RabbitMQ, Kafka): takes up to `max` records with the core's drain
 * and holds them, then, in the order taken, acknowledges each wanted record
 * (`wanted`: fingerprint → how many), writes every other record taken before
 * the last wanted one back to the DLQ (body, riders and key as they were) and
 * acknowledges it, and leaves the records after the last wanted one unsettled
 * so the broker keeps them where they were. If a write back fails, that record
 * and every later one are left unsettled and the error is rethrown: nothing is
 * lost (a record written back before the failure is already safe).
 */
export async function takeAndDelete(
  transport: Transport,
  dlq: string,
  wanted: ReadonlyMap<string, number>,
  options: { readonly max: number; readonly idleMs: number },
): Promise<TakeAndDeleteResult> {
  const publishRaw = transport.publishRaw?.bind(transport);
  if (publishRaw === undefined) throw new Error(`the ${transport.rules.name} transport cannot write raw records (publishRaw), so it cannot delete by take-and-restore`);
  const left = new Map(wanted);
  return drainQueue(transport, dlq, { max: options.max, idleMs: options.idleMs }, async (taken) => {
    const hashes = taken.map((d) => recordHash(d.body));
    const plan = new Map(left);
    let lastWanted = -1;
    hashes.forEach((hash, i) => {
      const n = plan.get(hash) ?? 0;
      if (n > 0) {
        plan.set(hash, n - 1);
        lastWanted = i;
      }
    });
    const deleted: string[] = [];
    let restored = 0;
    let i = 0;
    try {
      for (; i <= lastWanted; i++) {
        const delivery = taken[i] as Delivery;
        const hash = hashes[i] as string;
        const n = left.get(hash) ?? 0;
        if (n > 0) {
          left.set(hash, n - 1);
          await delivery.settle({ kind: 'ack' });
          deleted.push(hash);
          continue;
        }
        const keyed = delivery.key === undefined ? undefined : { key: delivery.key };
        // A null value (a Kafka tombstone) goes back as null, not as an empty value.
        await publishRaw(dlq, delivery.body, ridersOf(delivery.headers), delivery.nullValue === true ? { ...keyed, nullValue: true } : keyed);
        await delivery.settle({ kind: 'ack' });
        restored += 1;
      }
    } catch (error) {
      for (const delivery of taken.slice(i)) {
        await delivery.settle({ kind: 'unsettled', why: 'delete stopped on an error' }).catch(() => undefined);
      }
      throw Object.assign(error instanceof Error ? error : new Error(String(error)), { deleted, restored });
    }
    for (const delivery of taken.slice(lastWanted + 1)) {
      await delivery.settle({ kind: 'unsettled', why: 'taken past the last record to delete' }).catch(() => undefined);
    }
    return { deleted, restored, released: taken.length - lastWanted - 1 };
  });
}
