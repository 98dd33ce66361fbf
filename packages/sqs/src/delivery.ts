import type { Message } from '@aws-sdk/client-sqs';
import {
  DeadLetterWriteError,
  nativeSchemaVersion,
  reconcileSqsAttempts,
  type Decision,
  type Delivery,
  type Logger,
  type ReservationKeeper,
} from '@babelqueue/core';
import { headersOf, SCHEMA_VERSION_ATTRIBUTE } from './projection.js';
import { deadLetterOutgoing } from './dead-letter.js';
import { describe, errorCode, isReceiptGone } from './aws-errors.js';
import { MAX_VISIBILITY_SECONDS, type ResolvedOptions } from './options.js';
import type { QueueInfo } from './queues.js';
import type { Sender } from './publisher.js';
import type { SettleBatcher } from './settle-batcher.js';

/** What a delivery needs from its consume loop. */
export interface DeliveryContext {
  readonly queue: QueueInfo;
  readonly batcher: SettleBatcher;
  readonly sender: Sender;
  readonly options: ResolvedOptions;
  readonly logger: Logger;
  /** The consume loop's heartbeat: renews the visibility of every message it holds. */
  readonly keeper: ReservationKeeper;
}

type State =
  /** Received and reserved; the heartbeat keeps it invisible. */
  | 'held'
  /** Deleted (handled, dropped or dead-lettered). */
  | 'removed'
  /** Given back: released for a retry, or left to its visibility timeout. */
  | 'left';

/**
 * One received SQS message. It stays invisible (reserved) from the receive
 * until it is settled: the loop's heartbeat renews its visibility timeout
 * before half of it is gone while the handler runs, and stops on settle.
 *
 * - ack / drop: `DeleteMessage` (batched with others of the same moment);
 * - retry: a release, `ChangeMessageVisibility` with the backoff delay; the
 *   body is not touched and nothing is re-sent: SQS counts the delivery in
 *   `ApproximateReceiveCount`, which the next delivery's attempts reconcile;
 * - dead-letter: the record is sent to the DLQ first, then the message deleted;
 *   a failed write leaves it reserved and throws {@link DeadLetterWriteError};
 * - unsettled / native-dead-letter: nothing is sent: the visibility timeout
 *   lapses, SQS delivers it again (and its RedrivePolicy counts the receive).
 */
export class SqsDelivery implements Delivery {
  readonly body: Buffer;
  readonly queue: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly nativeSchemaVersion?: string;
  private state: State = 'held';
  private readonly receivedAt = Date.now();
  private readonly stopHeartbeat: () => void;
  private renewing: Promise<unknown> = Promise.resolve();

  constructor(private readonly context: DeliveryContext, private readonly message: Message) {
    this.queue = context.queue.name;
    this.body = Buffer.from(message.Body ?? '', 'utf8');
    this.headers = headersOf(message.MessageAttributes);
    const version = nativeSchemaVersion(message.MessageAttributes?.[SCHEMA_VERSION_ATTRIBUTE]?.StringValue);
    if (version !== undefined) this.nativeSchemaVersion = version;
    const seconds = context.options.visibilityTimeoutSeconds;
    this.stopHeartbeat = context.keeper.hold(() => {
      const renewal = this.changeVisibility(seconds).then(
        () => true,
        (error: unknown) => {
          if (isReceiptGone(errorCode(error))) return false;
          throw error;
        },
      );
      this.renewing = renewal.catch(() => undefined);
      return renewal;
    });
  }

  /** SQS: `max(body.attempts, ApproximateReceiveCount − 1)`; an absent or non-numeric count is ignored. */
  reconcileAttempts(bodyAttempts: number): number {
    return reconcileSqsAttempts(bodyAttempts, this.message.Attributes?.ApproximateReceiveCount);
  }

  async settle(decision: Decision): Promise<void> {
    if (this.state !== 'held') throw new Error(`delivery of "${this.queue}" was already settled`);
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        return this.delete();
      case 'retry':
        return this.release(decision.delayMs);
      case 'dead-letter':
        return this.deadLetter(decision.queue, decision.record, decision.reason === 'version_gate');
      case 'unsettled':
      case 'native-dead-letter':
        this.leave();
        return;
    }
  }

  /**
   * Makes the message visible again after `delayMs` (0: at once), without
   * touching it. Also used by the consume loop for messages a receive brought
   * as `close()` cancelled it.
   */
  async release(delayMs = 0): Promise<void> {
    await this.quiet();
    this.state = 'left';
    await this.changeVisibility(this.visibilitySeconds(delayMs));
  }

  /** Called by the consume loop once the runtime is done with it: one it never settled is left to its visibility timeout. */
  finish(): void {
    if (this.state === 'held') this.leave();
  }

  private async delete(): Promise<void> {
    try {
      await this.context.batcher.delete(this.context.queue.url, this.message.ReceiptHandle!);
      this.state = 'removed';
    } catch (error) {
      this.leave();
      throw error;
    } finally {
      this.stopHeartbeat();
    }
  }

  /** Sends the record to the DLQ ({@link deadLetterOutgoing}), then deletes the message. */
  private async deadLetter(queue: string, record: Buffer, versionGated: boolean): Promise<void> {
    try {
      await this.context.sender.send(queue, deadLetterOutgoing(record, this.message, versionGated));
    } catch (cause) {
      throw new DeadLetterWriteError(queue, { cause });
    }
    await this.delete();
  }

  private leave(): void {
    this.stopHeartbeat();
    this.state = 'left';
  }

  /** Stops the heartbeat and waits for a renewal in flight, so it cannot land after a release. */
  private async quiet(): Promise<void> {
    this.stopHeartbeat();
    await this.renewing;
  }

  private changeVisibility(seconds: number): Promise<void> {
    return this.context.batcher.changeVisibility(this.context.queue.url, this.message.ReceiptHandle!, seconds);
  }

  /**
   * A delay in whole seconds, rounded up (never earlier than asked), within
   * SQS's 12 hours counted from the receive.
   */
  private visibilitySeconds(delayMs: number): number {
    const wanted = Math.ceil(delayMs / 1000);
    const left = MAX_VISIBILITY_SECONDS - Math.ceil((Date.now() - this.receivedAt) / 1000);
    if (wanted <= left) return wanted;
    this.context.logger.warn({ queue: this.queue, delayMs, seconds: left }, 'retry delay is beyond SQS visibility limit of 12 hours from the receive; shortened');
    return Math.max(0, left);
  }
}

/** A release that failed is not lost: the message reappears when its visibility timeout lapses. */
export function logReleaseFailure(logger: Logger, queue: string, error: unknown): void {
  logger.warn({ queue, error: describe(error) }, 'could not release a message; it reappears when its visibility timeout lapses');
}
