import {
  CapabilityError,
  DeadLetterWriteError,
  pause,
  withAttempts,
  type Decision,
  type HeaderValue,
  type Logger,
} from '@babelqueue/core';
import { alreadySettled, type Delivery, type EnvelopeProjection, nativeSchemaVersion, NO_PROJECTION, projectPulsar, reconcilePulsarAttempts, recordProjection } from '@babelqueue/core/binding';
import type { ConsumerCommand } from './frames.js';
import type { Received } from './loop-consumer.js';
import type { SubscriptionType } from './options.js';
import type { Send } from './send.js';
import { editProperties, PulsarProperty } from './projection.js';

/** What a delivery needs from its consume loop. */
export interface DeliveryContext {
  /** The subscription's type: Pulsar honours a delivery delay only on Shared and Key_Shared. */
  readonly subscriptionType: SubscriptionType;
  /** Sends a message to a queue (or full topic name); resolves once the broker stored it. */
  send(queue: string, message: Send): Promise<void>;
  /** Sends a command on the loop's current consumer; false when none is subscribed. */
  command(command: ConsumerCommand): boolean;
  /** Aborted when the loop stops: a retry still waiting out its delay is left unsettled. */
  readonly stopping: AbortSignal;
  readonly logger: Logger;
}

/** The contract properties: a copy of an envelope or a record carries its own projection of them, never the delivery's. */
const CONTRACT = Object.values(PulsarProperty);
/** A version-gated record keeps the routing properties except these (seed 002). */
const NOT_ON_GATED = [PulsarProperty.ATTEMPTS, PulsarProperty.SCHEMA_VERSION, PulsarProperty.DELAY];

/**
 * One message from a Pulsar subscription. Settled exactly once, by message id,
 * on the consume loop's current consumer: acknowledged, negatively
 * acknowledged (redelivered after the configured delay), or, for a retry,
 * re-published to the same topic and acknowledged only after the copy is
 * stored. With no consumer subscribed at that moment the settlement is skipped and
 * logged: Pulsar redelivers the message (at-least-once), nothing is acked that
 * was not handled.
 */
export class PulsarDelivery implements Delivery {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly nativeSchemaVersion?: string;
  /** Pulsar's message id (base64), the handle of every settlement. */
  readonly messageId: string;
  /** 0 on a first delivery; advanced by a negative acknowledgement on Shared and Key_Shared. */
  readonly redeliveryCount: number;
  /** When the broker stored the message (ms since the epoch), or undefined if it did not say. */
  readonly publishTime: number | undefined;
  private readonly properties: Readonly<Record<string, string>>;
  private settled = false;
  private projection: EnvelopeProjection | undefined;

  constructor(
    readonly queue: string,
    message: Received,
    private readonly context: DeliveryContext,
  ) {
    this.messageId = message.messageId;
    this.body = message.body;
    this.properties = { ...message.properties };
    this.headers = this.properties;
    this.redeliveryCount = message.redeliveryCount;
    this.publishTime = message.publishTime;
    const version = nativeSchemaVersion(this.properties[PulsarProperty.SCHEMA_VERSION]);
    if (version !== undefined) this.nativeSchemaVersion = version;
  }

  /**
   * The redelivery count, reconciled as `max(body.attempts, RedeliveryCount)`
   * (0-based, no −1; PULSAR_RULES.attempts). A body that carries no count
   * (poison on the bounded retry) is counted by the `bq-attempts` property its
   * retry copies carry, or it would loop for ever: a re-published copy starts
   * again at redelivery count 0.
   */
  get nativeAttempts(): number {
    if (this.isEnvelope()) return this.redeliveryCount;
    return Math.max(this.redeliveryCount, reconcilePulsarAttempts(0, this.properties[PulsarProperty.ATTEMPTS]));
  }

  async settle(decision: Decision): Promise<void> {
    if (this.settled) throw alreadySettled(this.queue);
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        this.finish('acknowledge');
        return;
      case 'retry':
        return this.retry(decision.attempts, decision.delayMs);
      case 'dead-letter':
        return this.deadLetter(decision.queue, decision.record, decision.reason);
      case 'unsettled':
        if (this.context.stopping.aborted) {
          // Shutting down: the consumer closes once in-flight deliveries are done
          // and Pulsar hands the message on as it is, without counting a
          // redelivery as a negative acknowledgement would on Shared.
          this.settled = true;
          return;
        }
        this.finish('negativeAcknowledge');
        return;
      case 'native-dead-letter':
        this.finish('negativeAcknowledge');
        throw new CapabilityError('Pulsar has no native dead-letter queue the binding hands messages to');
    }
  }

  /**
   * Called by the consume loop once the runtime is done with the delivery: one
   * the runtime never settled (it threw) is negatively acknowledged, so it is
   * redelivered instead of staying with this consumer until it disconnects.
   */
  abandon(): boolean {
    if (this.settled) return false;
    this.finish('negativeAcknowledge');
    return true;
  }

  /**
   * Re-publish to the same topic with the new attempts in the body (a surgical
   * edit of the raw bytes) and the copy's own projection in the properties
   * (but the `bq-job` route it arrived on), riders kept; a poison body travels unchanged with the properties it came
   * with and `bq-attempts` counting. Ack the original only once the copy is
   * stored, nack it if the publish failed. Pulsar delays delivery only on
   * Shared and Key_Shared subscriptions, so on the others the delivery waits
   * out the delay here before the copy is sent.
   */
  private async retry(attempts: number, delayMs: number): Promise<void> {
    const brokerDelays = this.context.subscriptionType === 'Shared' || this.context.subscriptionType === 'Key_Shared';
    const delay = delayMs > 0 && brokerDelays ? Math.ceil(delayMs) : 0;
    if (delayMs > 0 && !brokerDelays && !(await pause(delayMs, this.context.stopping))) {
      this.settled = true;
      this.context.logger.info({ queue: this.queue }, 'stopped while a retry waited out its delay; Pulsar redelivers the message');
      return;
    }
    const envelope = this.isEnvelope();
    const body = envelope ? withAttempts(this.body, attempts) : this.body;
    const routing: Record<string, string> = delay > 0 ? { [PulsarProperty.DELAY]: String(delay) } : {};
    const properties = envelope
      ? editProperties(this.properties, { ...projectPulsar({ ...this.ownProjection(), attempts }), ...routing, ...this.route() }, CONTRACT)
      : editProperties(this.properties, { [PulsarProperty.ATTEMPTS]: String(attempts), ...routing }, delay > 0 ? [] : [PulsarProperty.DELAY]);
    try {
      await this.context.send(this.queue, { body, properties, delayMs: delay });
    } catch (error) {
      this.finish('negativeAcknowledge');
      throw error;
    }
    this.finish('acknowledge');
  }

  /**
   * Write the record to the DLQ, stored, then ack. A failed, unknown-URN or
   * poison record carries the projection of its own bytes (the counted
   * attempts; no envelope field on poison) beside the delivery's riders and
   * the `bq-job` route it arrived on; a
   * version-gated record (the raw body) keeps the delivery's properties
   * except `bq-attempts` and `bq-schema-version`. A failed write leaves the
   * delivery untouched and throws; the runtime then leaves it unsettled.
   */
  private async deadLetter(queue: string, record: Buffer, reason: Extract<Decision, { kind: 'dead-letter' }>['reason']): Promise<void> {
    const properties = reason === 'version_gate'
      ? editProperties(this.properties, {}, NOT_ON_GATED)
      : editProperties(this.properties, { ...projectPulsar(recordProjection(record)), ...this.route() }, CONTRACT);
    try {
      await this.context.send(queue, { body: record, properties });
    } catch (cause) {
      throw new DeadLetterWriteError(queue, { cause });
    }
    this.finish('acknowledge');
  }

  /**
   * The `bq-job` route the delivery arrived on (seed 000: the retry copy and
   * the DLQ record keep it, so the next delivery reaches the same handler), or
   * nothing when it came without one. It wins over the record's own projection:
   * a poison record has no URN of its own, and a peer may route a message on
   * a property that differs from its body's `job`.
   */
  private route(): Record<string, string> {
    const job = this.properties[PulsarProperty.JOB];
    return job !== undefined && job.trim() !== '' ? { [PulsarProperty.JOB]: job } : {};
  }

  private finish(how: 'acknowledge' | 'negativeAcknowledge'): void {
    this.settled = true;
    const command: ConsumerCommand = how === 'acknowledge'
      ? { messageId: this.messageId }
      : { type: 'negativeAcknowledge', messageId: this.messageId };
    if (!this.context.command(command)) {
      this.context.logger.warn(
        { queue: this.queue, settle: how },
        'the Pulsar consumer is not subscribed; the settlement is skipped and Pulsar redelivers the message',
      );
    }
  }

  /** The body's own projection ({@link NO_PROJECTION} unless it is an accepted envelope), decoded once, only when needed. */
  private ownProjection(): EnvelopeProjection {
    this.projection ??= recordProjection(this.body);
    return this.projection;
  }

  private isEnvelope(): boolean {
    return this.ownProjection() !== NO_PROJECTION;
  }
}
