import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type BatchResultErrorEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { TurnBatches, type Waiting } from '@babelqueue/core/binding';
import { BatchEntryError } from './errors.js';

interface Entry {
  readonly kind: 'delete' | 'visibility';
  readonly queueUrl: string;
  readonly receiptHandle: string;
  readonly seconds: number;
}

/** DeleteMessageBatch and ChangeMessageVisibilityBatch take at most 10 entries. */
const BATCH_ENTRIES = 10;

/**
 * Deletes and visibility changes, batched per queue: what is asked for in the
 * same turn of the event loop goes out in one `DeleteMessageBatch` /
 * `ChangeMessageVisibilityBatch` call (10 entries at most; {@link TurnBatches}
 * on setImmediate, so handlers that finished in separate I/O events of the
 * turn share a call). Safe to batch because SQS answers per entry: each
 * caller's promise settles with its own entry's result, and a call that fails
 * as a whole fails each of its entries.
 */
export class SettleBatcher {
  private readonly batches = new TurnBatches<Entry>(
    { maxItems: BATCH_ENTRIES, leaves: 'setImmediate' },
    (_key, batch) => void this.send(batch),
  );

  constructor(private readonly client: SQSClient) {}

  /** Deletes one received message. */
  delete(queueUrl: string, receiptHandle: string): Promise<void> {
    return this.add({ kind: 'delete', queueUrl, receiptHandle, seconds: 0 });
  }

  /** Sets a received message's visibility timeout to `seconds` from now (0: visible again at once). */
  changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    return this.add({ kind: 'visibility', queueUrl, receiptHandle, seconds });
  }

  private add(entry: Entry): Promise<void> {
    return this.batches.add(`${entry.kind} ${entry.queueUrl}`, entry);
  }

  private async send(batch: Waiting<Entry>[]): Promise<void> {
    const { kind, queueUrl } = batch[0]!.item;
    let failed: BatchResultErrorEntry[];
    try {
      const answer = kind === 'delete'
        ? await this.client.send(new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((w, i) => ({ Id: String(i), ReceiptHandle: w.item.receiptHandle })),
          }))
        : await this.client.send(new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((w, i) => ({ Id: String(i), ReceiptHandle: w.item.receiptHandle, VisibilityTimeout: w.item.seconds })),
          }));
      failed = answer.Failed ?? [];
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error));
      for (const w of batch) w.reject(reason);
      return;
    }
    const byId = new Map(failed.map((f) => [f.Id, f]));
    batch.forEach((w, i) => {
      const f = byId.get(String(i));
      if (f === undefined) w.resolve();
      else w.reject(new BatchEntryError(f.Code ?? 'Failed', f.Message ?? 'the entry failed', f.SenderFault === true));
    });
  }
}
