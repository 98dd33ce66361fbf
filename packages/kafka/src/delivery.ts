import { CapabilityError, DeadLetterWriteError, isVersionGated, NO_PROJECTION, projectKafka, recordProjection, withAttempts } from '@babelqueue/core';
import type { Decision, Delivery, HeaderValue, Logger } from '@babelqueue/core';
import type { KafkaMessage } from 'kafkajs';
import {
  KafkaHeader,
  deliveryHeaders,
  editHeaders,
  kafkaAttempts,
  kafkaSchemaVersion,
  type RawHeaders,
} from './projection.js';
import { tierForDelay, tierForRetry } from './retry-tiers.js';

/** One record to write: value and key exactly as given. */
export interface RecordWrite {
  readonly topic: string;
  readonly value: Buffer | null;
  readonly key: Buffer | null;
  readonly headers: RawHeaders;
}

/** What a delivery needs from its transport. */
export interface DeliveryContext {
  /** Writes one record and resolves once the broker acknowledged it (acks=all). */
  write(record: RecordWrite): Promise<void>;
  /** The retry tiers of this topic (empty: no retry path, as on a DLQ topic). */
  readonly retryTiersMs: readonly number[];
  /** Where a poison record dropped for want of tiers is reported. */
  readonly logger: Logger;
}

/** What `settle` returns when nothing is written: a promise is immutable, so one serves every record. */
const DONE: Promise<void> = Promise.resolve();

/** Where a delivery stands after `settle`. */
export type DeliveryState = 'pending' | 'settled' | 'unsettled';

/** Every contract header: a copy carries the ones its own projection gives, never the delivery's. */
const CONTRACT_HEADERS: readonly string[] = Object.values(KafkaHeader);

/**
 * Headers a version-gated record does not carry: the attempts / version
 * projection (the Pulsar rule) and the tier routing.
 */
const NOT_ON_VERSION_GATED = [KafkaHeader.ATTEMPTS, KafkaHeader.SCHEMA_VERSION, KafkaHeader.DELAY, KafkaHeader.ORIGINAL_TOPIC];

/**
 * A consumed Kafka record as the core's {@link Delivery}. Settling never
 * commits by itself: it performs the writes a decision needs (retry tier, DLQ)
 * and records whether the record may be committed; the partition processor
 * commits in offset order.
 */
export class KafkaDelivery implements Delivery {
  readonly body: Buffer;
  readonly nativeSchemaVersion?: string;
  /**
   * The record key as consumed (null stays null, empty stays empty). Not part
   * of the core `Delivery`; tools that write a record back (redrive restores)
   * pass it to `KafkaTransport.publishRaw(…, { key })` to keep it byte for byte.
   */
  readonly key: Buffer | null;
  /** True for a null value (a tombstone): `body` is empty, and a write-back (redrive restore) writes null again. */
  readonly nullValue: boolean;
  /** Where this delivery stands; only `settled` lets its offset be committed. */
  state: DeliveryState = 'pending';
  /** Why the record was left unsettled, when it was. */
  unsettledWhy: string | undefined;
  #headers: Readonly<Record<string, HeaderValue>> | undefined;

  constructor(
    readonly queue: string,
    readonly record: KafkaMessage,
    private readonly ctx: DeliveryContext,
  ) {
    this.body = record.value ?? Buffer.alloc(0);
    this.nullValue = record.value === null;
    this.key = record.key;
    const version = kafkaSchemaVersion(record.headers);
    if (version !== undefined) this.nativeSchemaVersion = version;
  }

  /** The record's headers as text, decoded on first read (the consume path itself reads only the two it needs). */
  get headers(): Readonly<Record<string, HeaderValue>> {
    return (this.#headers ??= deliveryHeaders(this.record.headers));
  }

  /** Kafka: the `bq-attempts` header when present, else the body's count (not a max). */
  reconcileAttempts(bodyAttempts: number): number {
    return kafkaAttempts(this.record.headers, bodyAttempts);
  }

  /**
   * Not async: an ack or a drop (every handled record) only marks the delivery
   * settled, so it returns the one shared resolved promise instead of making
   * an async frame and a promise per record. Writes go through {@link settleByWrite}.
   */
  settle(decision: Decision): Promise<void> {
    switch (decision.kind) {
      case 'ack':
      case 'drop':
        this.state = 'settled';
        return DONE;
      case 'unsettled':
        this.state = 'unsettled';
        this.unsettledWhy = decision.why;
        return DONE;
      default:
        return this.settleByWrite(decision);
    }
  }

  /** The decisions that write (a tier copy, a DLQ record) or refuse; rejects instead of throwing. */
  private async settleByWrite(decision: Extract<Decision, { kind: 'retry' | 'dead-letter' | 'native-dead-letter' }>): Promise<void> {
    switch (decision.kind) {
      case 'retry':
        await this.retry(decision.attempts, decision.rule === 'delay' ? decision.delayMs : undefined);
        this.state = 'settled';
        return;
      case 'dead-letter':
        try {
          await this.ctx.write({ topic: decision.queue, key: this.record.key, ...this.deadLetterRecord(decision.record, decision.reason === 'version_gate') });
        } catch (cause) {
          throw new DeadLetterWriteError(decision.queue, { cause });
        }
        this.state = 'settled';
        return;
      case 'native-dead-letter':
        throw new CapabilityError('Kafka has no native dead-letter queue');
    }
  }

  /**
   * A retry republish onto a tier topic, with the consumed key byte for byte,
   * `bq-delay` and `bq-original-topic`. The tier is picked by one of two rules,
   * never merged (seed 000): a retry takes tier min(attempts_before + 1, tier
   * count); a delay (a release with a release delay, `delayMs`) takes the
   * smallest tier whose delay covers it, and a delay above the largest tier is
   * refused (the record stays uncommitted and the error is logged). An accepted
   * envelope gets its `attempts` edited in place (every other byte kept) and
   * the headers of its own projection. Anything else is poison or
   * version-gated on the bounded retry: it travels unchanged (a null value
   * stays null) with the headers it arrived with, `bq-schema-version` included,
   * so the gate holds on the next delivery, and `bq-attempts` carries its
   * count. A gated value is never read, even when it would decode. The caller
   * commits.
   */
  private async retry(attempts: number, delayMs: number | undefined): Promise<void> {
    const tiers = this.ctx.retryTiersMs;
    const { value } = this.record;
    const projection = isVersionGated(this.nativeSchemaVersion) ? NO_PROJECTION : recordProjection(value);
    const envelope = projection !== NO_PROJECTION;
    if (tiers.length === 0) {
      // A DLQ topic has no tiers even on a transport with them: poison there takes the
      // no-tier rule (committed, dropped and logged) instead of blocking its partition.
      if (!envelope && delayMs === undefined) {
        this.ctx.logger.error({ topic: this.queue, offset: this.record.offset }, 'dropped: the message is gone (poison on a topic without retry tiers, and no DLQ)');
        return;
      }
      throw new CapabilityError('a retry on Kafka needs retry tiers (set retryTiersMs); the record stays uncommitted');
    }
    const tier = delayMs === undefined ? tierForRetry(this.queue, tiers, attempts) : tierForDelay(this.queue, tiers, delayMs);
    const routing = { [KafkaHeader.DELAY]: String(tier.delayMs), [KafkaHeader.ORIGINAL_TOPIC]: this.queue };
    const copy = envelope ? withAttempts(value!, attempts) : value;
    await this.ctx.write({
      topic: tier.topic,
      value: copy,
      key: this.record.key,
      headers: envelope
        ? editHeaders(this.record.headers, { ...projectKafka({ ...projection, attempts }).headers, ...routing }, CONTRACT_HEADERS)
        : editHeaders(this.record.headers, { [KafkaHeader.ATTEMPTS]: String(attempts), ...routing }),
    });
  }

  /**
   * The value and headers of a dead-letter record. A version-gated record is
   * the consumed value byte for byte (a null value stays null), never decoded:
   * it keeps the delivery's headers but not the attempts / version projection.
   * Any other record (failed, unknown URN, poison) carries the projection of
   * its own bytes: the counted attempts of a failed record, no envelope field
   * on a poison record. Riders ride along. A copy's record timestamp is when
   * it was written, not `meta.created_at`: the DLQ's time-based retention and
   * the re-inject wait read it.
   */
  private deadLetterRecord(record: Buffer, versionGated: boolean): Pick<RecordWrite, 'value' | 'headers'> {
    if (versionGated) return { value: this.record.value, headers: editHeaders(this.record.headers, {}, NOT_ON_VERSION_GATED) };
    return { value: record, headers: editHeaders(this.record.headers, projectKafka(recordProjection(record)).headers, CONTRACT_HEADERS) };
  }
}
