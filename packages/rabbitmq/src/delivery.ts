import type { Channel, Message } from 'amqplib';
import type { Acker, AckTicket } from './acker.js';
import { DeadLetterWriteError, withAttempts, type Decision, type HeaderValue, type Logger } from '@babelqueue/core';
import { alreadySettled, type Delivery, type Holds, type NativeCount } from '@babelqueue/core/binding';
import { plainHeaders, recordProperties } from './projection.js';
import type { Publisher } from './publisher.js';
import { delayQueue } from './queues.js';

/** The channel deliveries arrived on, whether it is still open, and who acknowledges on it. */
export interface Lane {
  readonly channel: Channel;
  readonly closed: boolean;
  readonly acker: Acker;
}

/** What a delivery needs from its consume loop. */
export interface DeliveryContext {
  readonly publisher: Publisher;
  readonly logger: Logger;
  /** Unsettled deliveries waiting for their delayed requeue. */
  readonly holds: Holds;
}

/**
 * One message taken from a RabbitMQ queue with manual acknowledgement. It is
 * acknowledged on the channel it arrived on, exactly once; if that channel is
 * gone, RabbitMQ has already put the message back and redelivers it, so the
 * settlement is skipped and logged rather than crashing the worker.
 */
export class RabbitMqDelivery implements Delivery {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /**
   * A quorum queue's `x-delivery-count` (how often the message went back to
   * the queue unsettled: a requeue, a lost channel); absent on a first delivery
   * and on classic queues. Read only under the quorum rules (`queueType: 'quorum'`).
   */
  readonly nativeAttempts: NativeCount;
  private settled = false;
  private readonly ticket: AckTicket;

  constructor(
    readonly queue: string,
    private readonly lane: Lane,
    private readonly message: Message,
    private readonly context: DeliveryContext,
  ) {
    this.body = message.content;
    this.ticket = lane.acker.track(message);
    this.headers = plainHeaders(message.properties.headers);
    this.nativeAttempts = deliveryCount(message.properties.headers?.['x-delivery-count']);
    // No version gate (the seeds define none for RabbitMQ, nor does the Python SDK):
    // x-schema-version is a projection; the body's meta.schema_version is checked.
  }

  // On a classic queue the body's count is the count (RABBITMQ_RULES.attempts): the runtimes
  // keep `attempts` in the body and re-publish with attempts + 1 (conformance note), `x-attempts`
  // only mirrors it, and classic queues keep no delivery count. Quorum rules add x-delivery-count.

  async settle(decision: Decision): Promise<void> {
    if (this.settled) throw alreadySettled(this.queue);
    if (this.lane.closed) {
      this.settled = true;
      this.context.logger.warn(
        { queue: this.queue, decision: decision.kind },
        'the delivery channel closed before settlement; RabbitMQ redelivers the message',
      );
      return;
    }
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        this.acknowledge();
        return;
      case 'retry':
        return this.retry(decision.attempts, decision.delayMs);
      case 'dead-letter':
        return this.deadLetter(decision.queue, decision.record);
      case 'unsettled':
        this.requeueLater();
        return;
      case 'native-dead-letter':
        // Only here does the binding reject without requeue: the queue's own
        // x-dead-letter-exchange (if the user configured one) takes the message.
        this.reject();
        return;
    }
  }

  /**
   * Called by the consume loop once the runtime is done with the delivery: a
   * delivery the runtime never settled (it threw) is requeued instead of
   * holding a prefetch slot until the channel closes.
   */
  abandon(): boolean {
    if (this.settled) return false;
    this.requeueLater();
    return true;
  }

  /** Re-publish with the new attempts, confirmed, then ack the original; a failed re-publish requeues it. */
  private async retry(attempts: number, delayMs: number): Promise<void> {
    const body = withAttempts(this.message.content, attempts);
    const properties = recordProperties(this.message.properties, body);
    const spec = delayMs > 0 ? delayQueue(this.queue, delayMs) : { kind: 'work' as const, name: this.queue };
    try {
      await this.context.publisher.send({ spec, body, properties, confirm: true, wait: false });
    } catch (error) {
      this.requeueLater();
      throw error;
    }
    this.acknowledge();
  }

  /**
   * Write the record to the DLQ, confirmed, then ack. A failed write leaves the
   * delivery untouched and throws; the runtime then settles it `unsettled`.
   */
  private async deadLetter(queue: string, record: Buffer): Promise<void> {
    // Every record is projected anew from its own bytes (RabbitMQ has no version gate).
    const properties = recordProperties(this.message.properties, record);
    try {
      await this.context.publisher.send({ spec: { kind: 'work', name: queue }, body: record, properties, confirm: true, wait: false });
    } catch (cause) {
      throw new DeadLetterWriteError(queue, { cause });
    }
    this.acknowledge();
  }

  /** The ack waits (one event-loop turn at most) to be coalesced with its neighbours' (see {@link Acker}). */
  private acknowledge(): void {
    this.finish();
    this.lane.acker.ack(this.ticket);
  }

  private reject(): void {
    this.finish();
    this.lane.acker.nack(this.ticket, false);
  }

  /** Requeue after a pause, so a fault on the broker side does not become a hot redelivery loop. */
  private requeueLater(): void {
    this.settled = true;
    this.context.holds.add(() => this.lane.acker.nack(this.ticket, true));
  }

  private finish(): void {
    if (this.settled) throw alreadySettled(this.queue);
    this.settled = true;
  }
}

/** `x-delivery-count` as amqplib decodes it (a number, or `{ '!': 'long', value }` for a typed one). */
function deliveryCount(value: unknown): NativeCount {
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'bigint') return value;
  if (value !== null && typeof value === 'object' && 'value' in value) return deliveryCount((value as { value: unknown }).value);
  return undefined;
}
