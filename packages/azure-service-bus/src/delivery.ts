import { randomUUID } from 'node:crypto';
import { isServiceBusError, type ServiceBusReceivedMessage, type ServiceBusReceiver } from '@azure/service-bus';
import {
  DeadLetterWriteError,
  isVersionGated,
  reconcileAsbAttempts,
  recordProjection,
  withAttempts,
  type Decision,
  type Delivery,
  type EnvelopeProjection,
  type HeaderValue,
  type Logger,
} from '@babelqueue/core';
import { bodyBytes, plainProperties, schemaVersionOf, SCHEMA_VERSION_PROPERTY, toServiceBusMessage, withAmqpTypes, type Placement } from './projection.js';

/** The native dead-letter reason of a version-gated message (seed 000; the Python SDK's spelling). */
export const VERSION_GATE_REASON = 'unsupported schema version';
/** The native dead-letter reason of a poison body. */
export const POISON_REASON = 'poison';

/** Service Bus's longest MessageId. */
const MAX_MESSAGE_ID = 128;

/**
 * The MessageId of a retry copy: `<meta.id>:retry:<sequence number of the delivery it
 * replaces>`. Duplicate detection drops a send whose MessageId was logged within its
 * window, and the envelope's meta.id was logged when the message was first sent, so a copy
 * under meta.id would vanish. The sequence number is unique in the entity, so copies of
 * different messages never collide, while the same copy sent twice (an in-doubt send the
 * SDK repeats, or a second copy after the original's lock was lost) is still a duplicate.
 * meta.id is cut, never the suffix, to stay within 128 characters; without a sequence
 * number (never the case for a PeekLock delivery) the suffix is random.
 */
export function retryMessageId(metaId: string, sequenceNumber: string | undefined): string {
  const suffix = `:retry:${sequenceNumber ?? randomUUID()}`;
  return `${metaId.slice(0, MAX_MESSAGE_ID - suffix.length)}${suffix}`;
}

/** What a delivery needs from its consume loop. */
export interface DeliveryContext {
  readonly receiver: ServiceBusReceiver;
  /** Sends a record or retry copy to a queue (the transport's sender). */
  readonly send: (queue: string, message: ReturnType<typeof toServiceBusMessage>) => Promise<void>;
  /** The SessionId the transport gives a message it sends (option `sessionId`; may throw: it can be the user's function). */
  readonly sessionIdFor: (queue: string, body: Buffer, projection: EnvelopeProjection | undefined) => string | undefined;
  /** The transport's partition key (option `partitionKey`). */
  readonly partitionKey: string | undefined;
  readonly logger: Logger;
}

/**
 * One PeekLock delivery. Settled exactly once through the receiver it came
 * from: complete, abandon (native redelivery, DeliveryCount + 1), an explicit
 * dead-letter into `$DeadLetterQueue`, or a record/copy written first and the
 * original completed only after that write succeeded.
 */
export class AsbDelivery implements Delivery {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly nativeSchemaVersion?: string;
  readonly poison?: string;
  private settled = false;

  constructor(
    readonly queue: string,
    private readonly message: ServiceBusReceivedMessage,
    private readonly context: DeliveryContext,
  ) {
    const bytes = bodyBytes(message);
    this.body = bytes ?? Buffer.alloc(0);
    if (bytes === undefined) this.poison = 'the body is an AMQP value or sequence section, not bytes or text';
    this.headers = plainProperties(message);
    const version = schemaVersionOf(message);
    if (version !== undefined) this.nativeSchemaVersion = version;
  }

  /**
   * `max(body.attempts, DeliveryCount − 1)` with DeliveryCount 1-based (seed). Service Bus
   * puts the AMQP `delivery-count` on the wire 0-based (failed deliveries so far) and
   * @azure/service-bus hands that raw header over as `deliveryCount`, so the 1-based
   * DeliveryCount is `deliveryCount + 1` and the floor is the raw count itself.
   */
  reconcileAttempts(bodyAttempts: number): number {
    const raw = this.message.deliveryCount;
    return reconcileAsbAttempts(bodyAttempts, raw === undefined ? undefined : raw + 1);
  }

  async settle(decision: Decision): Promise<void> {
    if (this.settled) throw new Error(`delivery of "${this.queue}" was already settled`);
    this.settled = true;
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        return this.act('complete', () => this.context.receiver.completeMessage(this.message));
      case 'retry':
        return this.retry(decision.attempts, decision.delayMs);
      case 'dead-letter':
        return this.deadLetter(decision.queue, decision.record, decision.reason === 'version_gate');
      case 'unsettled':
        // Abandon hands it back at once (counting a delivery); if that fails the lock lapses.
        return this.act('abandon', () => this.context.receiver.abandonMessage(this.message));
      case 'native-dead-letter':
        return this.act('dead-letter', () => this.context.receiver.deadLetterMessage(this.message, {
          deadLetterReason: this.versionGated() ? VERSION_GATE_REASON : POISON_REASON,
          deadLetterErrorDescription: decision.why,
        }));
    }
  }

  /**
   * No delay: abandon (Service Bus redelivers and counts it). A delay: a copy
   * with the new attempts, scheduled for later, then complete the original; a
   * failed copy abandons the original instead, so nothing is lost. The copy
   * keeps the session and its body's projection, but not MessageId = meta.id:
   * on an entity with duplicate detection that MessageId is logged already and
   * the copy would be accepted and dropped (see {@link retryMessageId}).
   */
  private async retry(attempts: number, delayMs: number): Promise<void> {
    if (delayMs <= 0) return this.act('abandon', () => this.context.receiver.abandonMessage(this.message));
    const copy = withAttempts(this.body, attempts);
    const projection = recordProjection(copy);
    try {
      const message = toServiceBusMessage(copy, projection, { riders: this.riders(), delayMs, placement: this.placement(this.queue, copy, projection) });
      message.messageId = retryMessageId(projection.messageId, this.message.sequenceNumber?.toString());
      await this.context.send(this.queue, message);
    } catch (error) {
      await this.act('abandon', () => this.context.receiver.abandonMessage(this.message));
      throw error;
    }
    return this.act('complete', () => this.context.receiver.completeMessage(this.message));
  }

  /**
   * Writes the record to the DLQ queue, then completes. A version-gated record
   * (the raw body) keeps the delivery's properties except `bq-schema-version`;
   * other records carry their own projection. A failed write throws and leaves
   * the original unsettled; the runtime then abandons it (redelivered, rejected
   * again, the write retried).
   */
  private async deadLetter(queue: string, record: Buffer, versionGated: boolean): Promise<void> {
    const projection = versionGated ? undefined : recordProjection(record);
    try {
      const placement = this.placement(queue, record, projection);
      const message = versionGated
        ? { ...toServiceBusMessage(record, undefined, { placement }), ...this.nativeRouting(), applicationProperties: withAmqpTypes(this.propertiesWithout(SCHEMA_VERSION_PROPERTY)) }
        : toServiceBusMessage(record, projection, { riders: this.riders(), placement });
      await this.context.send(queue, message);
    } catch (cause) {
      // Left unsettled: the runtime answers with `unsettled`, which abandons it.
      this.settled = false;
      throw new DeadLetterWriteError(queue, { cause });
    }
    return this.act('complete', () => this.context.receiver.completeMessage(this.message));
  }

  private versionGated(): boolean {
    return isVersionGated(this.nativeSchemaVersion);
  }

  /** The delivery's own routing fields, for a raw record. */
  private nativeRouting(): { subject?: string; correlationId?: string; messageId?: string } {
    const out: { subject?: string; correlationId?: string; messageId?: string } = {};
    if (this.message.subject !== undefined) out.subject = this.message.subject;
    if (typeof this.message.correlationId === 'string') out.correlationId = this.message.correlationId;
    if (typeof this.message.messageId === 'string') out.messageId = this.message.messageId;
    return out;
  }

  private propertiesWithout(name: string): Record<string, string | number | boolean> {
    const out: Record<string, string | number | boolean> = {};
    for (const [key, value] of Object.entries(this.headers)) if (key !== name && value !== null) out[key] = value;
    return out;
  }

  /** Riders the delivery carried (traceparent, tracestate, …): string properties outside the bq- contract. */
  private riders(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(this.headers)) if (typeof value === 'string' && !key.startsWith('bq-')) out[key] = value;
    return out;
  }

  /**
   * The delivery's own session and partition key (a retry copy stays in its session);
   * the transport's options only for what the delivery has not.
   */
  private placement(queue: string, body: Buffer, projection: EnvelopeProjection | undefined): Placement {
    return {
      sessionId: this.message.sessionId ?? this.context.sessionIdFor(queue, body, projection),
      partitionKey: this.message.partitionKey ?? this.context.partitionKey,
    };
  }

  /**
   * Runs one settlement call. A lost lock is not an error of the worker: Service Bus
   * redelivers the message, so it is logged and the settlement ends there.
   */
  private async act(what: string, call: () => Promise<void>): Promise<void> {
    try {
      await call();
    } catch (error) {
      if (isServiceBusError(error) && (error.code === 'MessageLockLost' || error.code === 'SessionLockLost')) {
        this.context.logger.warn({ queue: this.queue, messageId: this.message.messageId, settle: what }, 'the message lock was lost before settlement; Service Bus redelivers the message');
        return;
      }
      throw error;
    }
  }
}
