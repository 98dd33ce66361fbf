import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type BatchResultErrorEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { BatchEntryError } from './errors.js';

interface Entry {
  readonly receiptHandle: string;
  readonly seconds: number;
  resolve(): void;
  reject(error: Error): void;
}

interface Pending {
  readonly kind: 'delete' | 'visibility';
  readonly queueUrl: string;
  entries: Entry[];
  scheduled: boolean;
}

/** DeleteMessageBatch and ChangeMessageVisibilityBatch take at most 10 entries. */
const BATCH_ENTRIES = 10;

/**
 * Deletes and visibility changes, batched per queue: what is asked for in the
 * same turn of the event loop goes out in one `DeleteMessageBatch` /
 * `ChangeMessageVisibilityBatch` call (10 entries at most). Safe to batch
 * because SQS answers per entry: each caller's promise settles with its own
 * entry's result, and a call that fails as a whole fails each of its entries.
 */
export class SettleBatcher {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly client: SQSClient) {}

  /** Deletes one received message. */
  delete(queueUrl: string, receiptHandle: string): Promise<void> {
    return this.add('delete', queueUrl, receiptHandle, 0);
  }

  /** Sets a received message's visibility timeout to `seconds` from now (0: visible again at once). */
  changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    return this.add('visibility', queueUrl, receiptHandle, seconds);
  }

  private add(kind: Pending['kind'], queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    const key = `${kind} ${queueUrl}`;
    let pending = this.pending.get(key);
    if (pending === undefined) {
      pending = { kind, queueUrl, entries: [], scheduled: false };
      this.pending.set(key, pending);
    }
    const promise = new Promise<void>((resolve, reject) => pending.entries.push({ receiptHandle, seconds, resolve, reject }));
    if (pending.entries.length >= BATCH_ENTRIES) {
      this.flush(key, pending);
    } else if (!pending.scheduled) {
      pending.scheduled = true;
      setImmediate(() => this.flush(key, pending));
    }
    return promise;
  }

  private flush(key: string, pending: Pending): void {
    pending.scheduled = false;
    while (pending.entries.length > 0) {
      void this.send(pending.kind, pending.queueUrl, pending.entries.splice(0, BATCH_ENTRIES));
    }
    if (this.pending.get(key) === pending) this.pending.delete(key);
  }

  private async send(kind: Pending['kind'], queueUrl: string, entries: Entry[]): Promise<void> {
    let failed: BatchResultErrorEntry[];
    try {
      const answer = kind === 'delete'
        ? await this.client.send(new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: entries.map((e, i) => ({ Id: String(i), ReceiptHandle: e.receiptHandle })),
          }))
        : await this.client.send(new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: entries.map((e, i) => ({ Id: String(i), ReceiptHandle: e.receiptHandle, VisibilityTimeout: e.seconds })),
          }));
      failed = answer.Failed ?? [];
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error));
      for (const entry of entries) entry.reject(reason);
      return;
    }
    const byId = new Map(failed.map((f) => [f.Id, f]));
    entries.forEach((entry, i) => {
      const f = byId.get(String(i));
      if (f === undefined) entry.resolve();
      else entry.reject(new BatchEntryError(f.Code ?? 'Failed', f.Message ?? 'the entry failed', f.SenderFault === true));
    });
  }
}
