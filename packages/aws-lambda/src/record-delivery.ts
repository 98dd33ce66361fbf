import { DeadLetterWriteError, type Decision, type Logger } from '@babelqueue/core';
import { nativeSchemaVersion, type Delivery } from '@babelqueue/core/binding';
import { MAX_VISIBILITY_SECONDS, type SqsTransport } from '@babelqueue/sqs';
import type { SQSRecord } from 'aws-lambda';
import { headersOfRecord, messageOfRecord } from './record.js';

/** What a record's settlement needs of the App's SQS transport. */
export type RecordSettler = Pick<SqsTransport, 'writeDeadLetter' | 'changeVisibility'>;

/** The attribute the version gate reads (FACTS §4, the SQS projection). */
const SCHEMA_VERSION_ATTRIBUTE = 'bq-schema-version';

/** What a record's delivery needs beside the record. */
export interface RecordContext {
  readonly settler: RecordSettler;
  readonly logger: Logger;
  readonly releaseRetries: boolean;
  /** When the invocation began: SQS counts a visibility change's 12 hours from the receive, just before. */
  readonly receivedAt: number;
}

/**
 * One record of an SQS event as a {@link Delivery}. The event source mapping
 * deletes the records the function does not report and redelivers the others
 * after their visibility timeout, so a decision settles as:
 *
 * - ack / drop: success (Lambda deletes it; a drop was logged at ERROR by the App);
 * - retry: failure; with `releaseRetries`, `ChangeMessageVisibility(delay)`
 *   first, as the SQS binding's release (the next delivery's attempts are
 *   reconciled from `ApproximateReceiveCount`);
 * - dead-letter: the record is written to the DLQ with the SQS binding's
 *   attributes, then success; a failed write throws
 *   {@link DeadLetterWriteError} and the record stays a failure;
 * - unsettled / native-dead-letter: failure, left to the visibility timeout
 *   and the queue's RedrivePolicy.
 */
export class RecordDelivery implements Delivery {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly nativeSchemaVersion?: string;
  /** True once the record is done with: Lambda may delete it. */
  succeeded = false;
  private settled = false;

  constructor(private readonly context: RecordContext, private readonly record: SQSRecord, readonly queue: string) {
    this.body = Buffer.from(record.body ?? '', 'utf8');
    this.headers = headersOfRecord(record.messageAttributes);
    const version = nativeSchemaVersion(record.messageAttributes?.[SCHEMA_VERSION_ATTRIBUTE]?.stringValue);
    if (version !== undefined) this.nativeSchemaVersion = version;
  }

  /** `ApproximateReceiveCount`, reconciled by the SQS binding's rules: `max(body.attempts, ApproximateReceiveCount − 1)`. */
  get nativeAttempts(): string | undefined {
    return this.record.attributes?.ApproximateReceiveCount;
  }

  async settle(decision: Decision): Promise<void> {
    if (this.settled) throw new Error(`record of "${this.queue}" was already settled`);
    this.settled = true;
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        this.succeeded = true;
        return;
      case 'retry':
        if (this.context.releaseRetries) await this.release(decision.delayMs);
        return;
      case 'dead-letter':
        try {
          await this.context.settler.writeDeadLetter(decision.queue, decision.record, messageOfRecord(this.record), {
            versionGated: decision.reason === 'version_gate',
          });
        } catch (cause) {
          throw new DeadLetterWriteError(decision.queue, { cause });
        }
        this.succeeded = true;
        return;
      case 'unsettled':
      case 'native-dead-letter':
        return;
    }
  }

  /**
   * Makes the message visible again after `delayMs` (whole seconds, rounded
   * up, within SQS's 12 hours from the receive). It stays a failure either
   * way; a release that fails leaves it to its visibility timeout.
   */
  async release(delayMs = 0): Promise<void> {
    await this.context.settler.changeVisibility(this.queue, this.record.receiptHandle, this.visibilitySeconds(delayMs));
  }

  private visibilitySeconds(delayMs: number): number {
    const wanted = Math.ceil(delayMs / 1000);
    const left = MAX_VISIBILITY_SECONDS - Math.ceil((Date.now() - this.context.receivedAt) / 1000);
    if (wanted <= left) return wanted;
    this.context.logger.warn({ queue: this.queue, delayMs, seconds: left }, 'retry delay is beyond SQS visibility limit of 12 hours from the receive; shortened');
    return Math.max(0, left);
  }
}
