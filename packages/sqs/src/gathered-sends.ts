import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { TurnBatches, type Waiting } from '@babelqueue/core/binding';
import type { QueueInfo } from './queues.js';

/** One message's SendMessage fields, checked, and its size as SQS counts it. */
export interface Prepared {
  readonly fields: Omit<SendMessageBatchRequestEntry, 'Id'>;
  readonly bytes: number;
}

/** An entry's answer in a batch call: sent, or the reason it was not. */
export type EntryAnswer = { readonly ok: true } | { readonly ok: false; readonly error: Error };

/** How the gatherer sends: one message (SendMessage, with the client's retries), or a batch answered per entry. */
export interface SendCalls {
  one(info: QueueInfo, prepared: Prepared): Promise<void>;
  batch(info: QueueInfo, prepared: readonly Prepared[]): Promise<EntryAnswer[]>;
}

/** SendMessageBatch takes at most 10 entries and 1 MiB in total. */
export const BATCH_ENTRIES = 10;
export const BATCH_BYTES = 1_048_576;

interface Send {
  readonly info: QueueInfo;
  readonly prepared: Prepared;
}

/**
 * Gathers the messages sent to one standard queue in one run of callbacks
 * into `SendMessageBatch` calls of up to 10 ({@link TurnBatches}, on
 * process.nextTick): one request, and one billed call, instead of ten. A
 * lone message goes by `SendMessage` as before.
 *
 * Each message's promise settles with its own entry's answer. An entry the
 * batch names as failed, or every entry of a call that failed as a whole,
 * is sent again by itself with `SendMessage` (the client's retries, and the
 * error SendMessage gives), so a batch never fails a message a send of its
 * own would have delivered. FIFO queues are not gathered (the caller sends
 * them one by one).
 */
export class GatheredSends {
  private readonly batches = new TurnBatches<Send>(
    { maxItems: BATCH_ENTRIES, maxBytes: BATCH_BYTES, bytesOf: (send) => send.prepared.bytes },
    (_url, batch) => this.dispatch(batch),
  );

  constructor(private readonly calls: SendCalls) {}

  send(info: QueueInfo, prepared: Prepared): Promise<void> {
    return this.batches.add(info.url, { info, prepared });
  }

  /** Sends what waits now (a close sends it before the client goes). */
  flush(): void {
    this.batches.flush();
  }

  private dispatch(batch: Waiting<Send>[]): void {
    const alone = ({ item, resolve, reject }: Waiting<Send>) => void this.calls.one(item.info, item.prepared).then(resolve, reject);
    if (batch.length === 1) return alone(batch[0]!);
    const { info } = batch[0]!.item;
    this.calls.batch(info, batch.map((w) => w.item.prepared)).then(
      (answers) => batch.forEach((w, i) => (answers[i]?.ok === true ? w.resolve() : alone(w))),
      () => batch.forEach(alone),
    );
  }
}
