import { drainQueue, type Transport } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { recordHash } from './records.js';
import { ridersOf } from './redrive-plan.js';

/** What {@link takeChosen} did. */
export interface TakeChosenResult {
  /** Fingerprints of the chosen records handled (deleted, or redriven), one entry per record. */
  readonly done: string[];
  /** Records taken ahead of a chosen one and written back to the tail of the DLQ. */
  readonly restored: number;
  /** Records taken after the last chosen one and handed back unsettled (they stay in place). */
  readonly released: number;
}

/** Options of {@link takeChosen}. */
export interface TakeChosenOptions {
  /** Take at most this many records. */
  readonly max: number;
  /** The drain's per-pop wait; it ends sooner, as soon as every chosen record was taken. */
  readonly idleMs: number;
}

/**
 * Acts on chosen records of a DLQ on a broker that cannot take one record
 * from the middle of a queue (RabbitMQ, Kafka, Pulsar, Artemis, Service Bus).
 * It takes records with the core's drain and holds them, and stops taking as
 * soon as every chosen record (`wanted`: fingerprint → how many) is among
 * them, so a choice near the head takes only the records up to it, not the
 * whole DLQ. Then, in the order taken: each chosen record is handed to `act`,
 * which writes whatever it must (a redrive's reset copy) and settles it; every
 * other record taken before the last chosen one is written back to the DLQ
 * (body, riders and key as they were) and acknowledged; the records after the
 * last chosen one are left unsettled, so the broker keeps them where they
 * were. If a write fails, that record and every later one are left unsettled
 * and the error is rethrown with `done` and `restored` so far: nothing is lost.
 */
export async function takeChosen(
  transport: Transport,
  dlq: string,
  wanted: ReadonlyMap<string, number>,
  options: TakeChosenOptions,
  act: (delivery: Delivery) => Promise<void>,
): Promise<TakeChosenResult> {
  const publishRaw = transport.publishRaw?.bind(transport);
  if (publishRaw === undefined) throw new Error(`the ${transport.rules.name} transport cannot write raw records (publishRaw), so it cannot take and restore`);
  const missing = new Map(wanted);
  let stillMissing = [...missing.values()].reduce((sum, n) => sum + n, 0);
  const allTaken = new AbortController();
  const onTaken = (delivery: Delivery) => {
    const hash = recordHash(delivery.body);
    const n = missing.get(hash) ?? 0;
    if (n === 0) return;
    missing.set(hash, n - 1);
    stillMissing -= 1;
    if (stillMissing === 0) allTaken.abort();
  };
  const left = new Map(wanted);
  return drainQueue(transport, dlq, { max: options.max, idleMs: options.idleMs, signal: allTaken.signal, onTaken }, async (taken) => {
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
    const done: string[] = [];
    let restored = 0;
    let i = 0;
    try {
      for (; i <= lastWanted; i++) {
        const delivery = taken[i] as Delivery;
        const hash = hashes[i] as string;
        const n = left.get(hash) ?? 0;
        if (n > 0) {
          left.set(hash, n - 1);
          await act(delivery);
          done.push(hash);
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
        await delivery.settle({ kind: 'unsettled', why: 'the action stopped on an error' }).catch(() => undefined);
      }
      throw Object.assign(error instanceof Error ? error : new Error(String(error)), { done, restored });
    }
    for (const delivery of taken.slice(lastWanted + 1)) {
      await delivery.settle({ kind: 'unsettled', why: 'taken past the last chosen record' }).catch(() => undefined);
    }
    return { done, restored, released: taken.length - lastWanted - 1 };
  });
}
