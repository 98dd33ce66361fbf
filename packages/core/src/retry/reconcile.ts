import { asBuffer } from '../envelope/utf8.js';
import type { Envelope } from '../envelope/types.js';
import type { AttemptsFormula } from '../settlement/binding-rules.js';

/**
 * The body side of a reconciliation: the envelope (its `attempts`) or the
 * body's attempts as a number. A value that is not an integer counts as 0.
 */
export type BodyAttempts = number | Pick<Envelope, 'attempts'> | { readonly attempts?: unknown };

/** A native delivery counter as a client hands it over. */
export type NativeCount = string | number | bigint | null | undefined;

/**
 * SQS: `max(body.attempts, ApproximateReceiveCount - 1)`; an absent, blank or
 * non-numeric count is ignored.
 */
export function reconcileSqsAttempts(body: BodyAttempts, approximateReceiveCount: NativeCount): number {
  return withFloor(body, nativeCount(approximateReceiveCount), -1);
}

/** Azure Service Bus: `max(body.attempts, DeliveryCount - 1)` (DeliveryCount is 1-based). */
export function reconcileAsbAttempts(body: BodyAttempts, deliveryCount: NativeCount): number {
  return withFloor(body, nativeCount(deliveryCount), -1);
}

/** Pulsar: `max(body.attempts, RedeliveryCount)` (0-based, no −1). */
export function reconcilePulsarAttempts(body: BodyAttempts, redeliveryCount: NativeCount): number {
  return withFloor(body, nativeCount(redeliveryCount), 0);
}

/** Artemis over AMQP 1.0: `max(body.attempts, delivery-count)` (0-based, no −1). */
export function reconcileArtemisAttempts(body: BodyAttempts, deliveryCount: NativeCount): number {
  return withFloor(body, nativeCount(deliveryCount), 0);
}

/** Artemis over JMS: `max(body.attempts, JMSXDeliveryCount - 1)` (1-based). */
export function reconcileJmsAttempts(body: BodyAttempts, jmsxDeliveryCount: NativeCount): number {
  return withFloor(body, nativeCount(jmsxDeliveryCount), -1);
}

/** A Kafka header value as clients hand it over (KafkaJS: a Buffer, a string, or a list for a repeated header). */
export type KafkaHeaderValue = string | Uint8Array | null | undefined | readonly (string | Uint8Array)[];

/**
 * Kafka: the `bq-attempts` header when present (authoritative, even when lower
 * than the body), else the body's attempts. A null, blank or non-numeric
 * header counts as absent; of a repeated header the last value counts.
 */
export function reconcileKafkaAttempts(body: BodyAttempts, headerValue: KafkaHeaderValue): number {
  const value = Array.isArray(headerValue) ? headerValue[headerValue.length - 1] : headerValue;
  const text = value instanceof Uint8Array ? asBuffer(value).toString('utf8') : value;
  return nativeCount(text as string | null | undefined) ?? bodyAttempts(body);
}

/**
 * A delivery's attempts by its binding's formula (`BindingRules.attempts`):
 * the body's count combined with the broker's counter as the spec says. A
 * native count that is absent, blank or not a whole number is ignored.
 */
export function reconcileAttempts(formula: AttemptsFormula, body: BodyAttempts, native: NativeCount): number {
  switch (formula.kind) {
    case 'body':
      return bodyAttempts(body);
    case 'max':
      return withFloor(body, nativeCount(native), formula.offset);
    case 'native-else-body':
      return nativeCount(native) ?? bodyAttempts(body);
  }
}

/** The body's attempts as a number (0 when it is not an integer). */
export function bodyAttempts(body: BodyAttempts): number {
  const value = typeof body === 'number' ? body : (body as { attempts?: unknown }).attempts;
  return typeof value === 'number' && Number.isInteger(value) ? value : 0;
}

function withFloor(body: BodyAttempts, count: number | undefined, offset: number): number {
  const own = bodyAttempts(body);
  return count === undefined ? own : Math.max(own, count + offset);
}

/** A non-negative integer count, or undefined for anything absent, blank or not a whole number. */
function nativeCount(value: NativeCount): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'bigint') return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return /^\d+$/.test(trimmed) ? nativeCount(Number(trimmed)) : undefined;
}
