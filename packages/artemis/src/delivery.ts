import type { Delivery as AmqpDelivery, Message as AmqpMessage } from 'rhea';
import {
  DeadLetterWriteError,
  nativeSchemaVersion,
  projectArtemis,
  reconcileArtemisAttempts,
  recordProjection,
  withAttempts,
  type Decision,
  type Delivery,
  type HeaderValue,
  type Logger,
} from '@babelqueue/core';
import type { Holds } from './holds.js';
import { ATTEMPTS_PROPERTY, copyMessage, plainProperties, projectedCopy, readBody, SCHEMA_VERSION_PROPERTY } from './projection.js';
import type { Publisher } from './publisher.js';

/** The receiving link deliveries arrived on, and whether it is still attached. */
export interface Lane {
  readonly closed: boolean;
}

/** What a delivery needs from its consume loop. */
export interface DeliveryContext {
  readonly publisher: Publisher;
  readonly logger: Logger;
  /** Unsettled deliveries waiting to be released. */
  readonly holds: Holds;
  /**
   * The broker's max-delivery-attempts for the queue (0 or -1: unlimited), as
   * given or as the broker answered when the link attached; undefined when
   * unknown: then no settlement leaves the count to the broker.
   */
  readonly brokerMaxDeliveryAttempts: number | undefined;
}

/**
 * One message taken from an Artemis queue over AMQP 1.0, settled exactly once
 * on the link it arrived on:
 *
 * - ack / drop → `accepted`;
 * - retry without delay → `modified` with delivery-failed: the broker redelivers
 *   it and counts the delivery (delivery-count + 1), the body stays untouched;
 * - retry with a delay (or when the broker's count cannot carry the attempt) →
 *   a copy with the new `attempts` is sent with `x-opt-delivery-time`, and the
 *   original is accepted only after the broker accepted the copy;
 * - dead-letter → the record is sent to the DLQ, accepted by the broker, then
 *   the original is accepted; a failed write throws and settles nothing;
 * - unsettled → `released` after a short hold (the broker redelivers it).
 *
 * If the link is gone (connection lost), the broker has already put the
 * message back: the settlement is skipped and logged, never sent on another link.
 */
export class ArtemisDelivery implements Delivery {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly nativeSchemaVersion?: string;
  readonly poison?: string;
  private readonly deliveryCount: number;
  private settled = false;

  constructor(
    readonly queue: string,
    private readonly amqp: AmqpDelivery,
    private readonly message: AmqpMessage,
    private readonly lane: Lane,
    private readonly context: DeliveryContext,
  ) {
    const { body, poison } = readBody(message);
    this.body = body;
    if (poison !== undefined) this.poison = poison;
    this.headers = plainProperties(message.application_properties);
    const version = nativeSchemaVersion((message.application_properties as Record<string, unknown> | undefined)?.[SCHEMA_VERSION_PROPERTY]);
    if (version !== undefined) this.nativeSchemaVersion = version;
    const count = Number(message.delivery_count ?? 0);
    this.deliveryCount = Number.isSafeInteger(count) && count >= 0 ? count : 0;
  }

  /** `max(body.attempts, delivery-count)`: the AMQP count is 0-based, so no −1 (seed 000). */
  reconcileAttempts(bodyAttempts: number): number {
    return reconcileArtemisAttempts(bodyAttempts, this.deliveryCount);
  }

  async settle(decision: Decision): Promise<void> {
    if (this.settled) throw new Error(`delivery of "${this.queue}" was already settled`);
    if (this.lane.closed) {
      this.settled = true;
      this.context.logger.warn(
        { queue: this.queue, decision: decision.kind },
        'the receiving link closed before settlement; Artemis redelivers the message',
      );
      return;
    }
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        this.finish('accept', () => this.amqp.accept());
        return;
      case 'retry':
        return this.retry(decision.attempts, decision.delayMs);
      case 'dead-letter':
        return this.deadLetter(decision.queue, decision.record, decision.reason);
      case 'unsettled':
        this.releaseLater(false);
        return;
      case 'native-dead-letter':
        // Not produced by Artemis's rules; `rejected` hands it to the broker's dead-letter address.
        this.finish('reject', () => this.amqp.reject({ condition: 'amqp:internal-error', description: decision.why }));
        return;
    }
  }

  /**
   * Called by the consume loop once the runtime is done with the delivery: a
   * delivery the runtime never settled is released instead of holding a credit.
   */
  abandon(): boolean {
    if (this.settled) return false;
    this.releaseLater(false);
    return true;
  }

  private async retry(attempts: number, delayMs: number): Promise<void> {
    if (delayMs <= 0 && this.brokerCounts(attempts)) {
      this.finish('modified', () => this.amqp.modified({ delivery_failed: true }));
      return;
    }
    // A re-send starts the broker's delivery-count at 0 again, so the body carries the count,
    // and the copy carries the projection of its own bytes (a poison body: none).
    const body = withAttempts(this.body, attempts);
    const copy = projectedCopy(this.message, body, projectArtemis(recordProjection(body)), delayMs);
    try {
      await this.context.publisher.send(this.queue, copy, false);
    } catch (error) {
      this.releaseLater(true);
      throw error;
    }
    this.finish('accept', () => this.amqp.accept());
  }

  /**
   * True when a `modified` (delivery-failed) redelivery reads back as `attempts`:
   * the next delivery-count (this one + 1) must reach it — it does not after a
   * re-send put a higher count in the body — and the broker must not move the
   * message to its own dead-letter address for reaching max-delivery-attempts.
   * With that limit unknown, never: the retry is re-sent.
   */
  private brokerCounts(attempts: number): boolean {
    const max = this.context.brokerMaxDeliveryAttempts;
    const next = this.deliveryCount + 1;
    return max !== undefined && next >= attempts && (max <= 0 || next < max);
  }

  private async deadLetter(queue: string, record: Buffer, reason: string): Promise<void> {
    // A failed, unknown-URN or poison record carries the projection of its own
    // bytes (the counted attempt; no envelope field on poison). A version-gated
    // record is the raw body: like Pulsar's, it keeps the delivery's properties
    // but not the attempts and schema-version projection.
    const copy = reason === 'version_gate'
      ? copyMessage(this.message, record, { [ATTEMPTS_PROPERTY]: undefined, [SCHEMA_VERSION_PROPERTY]: undefined })
      : projectedCopy(this.message, record, projectArtemis(recordProjection(record)));
    copy.content_type = 'application/json';
    try {
      await this.context.publisher.send(queue, copy, false);
    } catch (cause) {
      throw new DeadLetterWriteError(queue, { cause });
    }
    this.finish('accept', () => this.amqp.accept());
  }

  /**
   * Give it back after the hold: `modified` (the failed attempt counted) when
   * `counted` and the broker's limit allows, else `released`.
   */
  private releaseLater(counted: boolean): void {
    this.settled = true;
    const fail = counted && this.brokerCounts(this.deliveryCount + 1);
    this.context.holds.add(() =>
      this.finish(fail ? 'modified' : 'release', () => (fail ? this.amqp.modified({ delivery_failed: true }) : this.amqp.release()), true),
    );
  }

  private finish(what: string, act: () => void, already = false): void {
    if (this.settled && !already) throw new Error(`delivery of "${this.queue}" was already settled`);
    this.settled = true;
    if (this.lane.closed) return;
    try {
      act();
    } catch (error) {
      this.context.logger.warn(
        { queue: this.queue, settle: what, error: error instanceof Error ? error.message : String(error) },
        'settlement lost with its link; Artemis redelivers the message',
      );
    }
  }
}
