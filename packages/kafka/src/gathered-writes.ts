import { TurnBatches, type Waiting } from '@babelqueue/core/binding';
import type { RecordWrite } from './delivery.js';
import { refusedByBroker } from './whole-send.js';

/**
 * The most bytes (values, keys and headers) one gathered produce call
 * carries: a quarter of the broker's default `max.message.bytes` (1 MiB), so
 * a gathered batch fits where each of its records would. A record this size
 * or larger is written by itself.
 */
export const GATHER_BYTES = 256 * 1024;

/** How the gatherer writes: several records of one topic in one produce call, or one record. */
export interface ProduceCalls<R extends RecordWrite> {
  many(topic: string, records: readonly R[]): Promise<void>;
  one(record: R): Promise<void>;
}

/**
 * Gathers the records written to one topic in one run of callbacks into one
 * produce call ({@link TurnBatches}, on process.nextTick), as Kafka's own
 * clients batch what is sent while they are busy. kafkajs otherwise sends a
 * produce request per record, and the request's encoding and round trip were
 * most of a publisher's CPU.
 *
 * Each record's promise settles with its call: resolved once the call is
 * acknowledged (acks=all), rejected with its error. A call the broker
 * refused with an error no retry cures (a record the topic refuses, a batch
 * over a topic's smaller `max.message.bytes`) is split: each record is
 * written again by itself, in order, and settles with its own answer, so one
 * bad record never fails its neighbours. Any other failure (retries ran out,
 * no connection) fails every record the call carried at once (some may have
 * been written: at-least-once, as for any failed produce call). A lone
 * record goes alone, as before.
 */
export class GatheredWrites<R extends RecordWrite> {
  private readonly batches = new TurnBatches<R>({ maxBytes: GATHER_BYTES, bytesOf: sizeOf }, (topic, batch) => this.send(topic, batch));

  constructor(private readonly calls: ProduceCalls<R>) {}

  /** A record of GATHER_BYTES or more is a batch of its own (the batches' byte limit), so it goes alone. */
  write(record: R): Promise<void> {
    return this.batches.add(record.topic, record);
  }

  /** Sends what waits now, without waiting for the tick (a close sends it on the producer it is closing). */
  flush(): void {
    this.batches.flush();
  }

  private send(topic: string, batch: Waiting<R>[]): void {
    if (batch.length === 1) {
      const [only] = batch as [Waiting<R>];
      this.calls.one(only.item).then(only.resolve, only.reject);
      return;
    }
    this.calls.many(topic, batch.map((w) => w.item)).then(
      () => { for (const w of batch) w.resolve(); },
      (error: unknown) => {
        if (refusedByBroker(error)) void this.oneByOne(batch);
        else for (const w of batch) w.reject(error);
      },
    );
  }

  /** Writes each record by itself, in the order written, each settling with its own answer. */
  private async oneByOne(batch: readonly Waiting<R>[]): Promise<void> {
    for (const w of batch) await this.calls.one(w.item).then(w.resolve, w.reject);
  }
}

/** About the bytes `record` takes in a batch (a string header counted by its length, a close enough bound). */
function sizeOf(record: RecordWrite): number {
  let bytes = (record.value?.length ?? 0) + (record.key?.length ?? 0);
  for (const name in record.headers) {
    const value = record.headers[name];
    bytes += name.length;
    if (Array.isArray(value)) for (const v of value) bytes += v.length;
    else if (value !== undefined) bytes += value.length;
  }
  return bytes;
}
