import type { MessageProperties, Options } from 'amqplib';
import { projectRabbitMq, recordProjection, type EnvelopeProjection, type HeaderValue } from '@babelqueue/core';

/** The `app_id` every BabelQueue producer stamps. */
export const APP_ID = 'babelqueue';

/** The contract headers of the RabbitMQ projection; they win over a rider of the same name. */
export const SCHEMA_VERSION_HEADER = 'x-schema-version';
export const SOURCE_LANG_HEADER = 'x-source-lang';
export const ATTEMPTS_HEADER = 'x-attempts';

/** Headers RabbitMQ adds itself when it dead-letters or redelivers; never copied onto a re-publish. */
const BROKER_HEADERS = /^x-(death|first-death-.*|last-death-.*|delivery-count)$/;

/**
 * An AMQP field-table integer: signed 32-bit (`I`), or 64-bit (`l`) past that
 * range. amqplib would otherwise pick the narrowest width (a signed byte for
 * 0..127), which several AMQP clients read as a byte rather than an integer.
 */
export function amqpInteger(value: number): { '!': 'int' | 'long'; value: number } {
  return { '!': value >= -0x80000000 && value < 0x80000000 ? 'int' : 'long', value };
}

/**
 * The publish properties of an envelope: the core's RabbitMQ projection
 * (FACTS §4, conformance `rabbitmq` block: `type`, `correlation_id`,
 * `message_id`, `app_id`, `content_type`, `content_encoding`, persistent,
 * headers `x-schema-version`, `x-source-lang`, `x-attempts`, riders merged with
 * the contract winning) with the two counters pinned to AMQP integers.
 */
export function projectProperties(
  projection: EnvelopeProjection,
  riders?: Readonly<Record<string, string>>,
): Options.Publish {
  return amqpProperties(projection, riders, (slot) => {
    throw new RangeError(`${slot} is longer than 255 bytes and cannot be carried in an AMQP short string`);
  });
}

/** The short-string slots of the projection; AMQP caps a short string at 255 bytes. */
const SHORT_STRINGS = [
  ['type', 'type (URN)'],
  ['correlationId', 'correlation_id (trace_id)'],
  ['messageId', 'message_id (meta.id)'],
] as const;

/** The two contract headers that are AMQP integers. */
const INTEGER_HEADERS = [SCHEMA_VERSION_HEADER, ATTEMPTS_HEADER] as const;

/** The projection as amqplib publish options; `oversized` decides about a short string over 255 bytes. */
function amqpProperties(
  projection: EnvelopeProjection,
  riders: Readonly<Record<string, string>> | undefined,
  oversized: (slot: string) => void,
): Options.Publish {
  // A fresh object (headers too) on every call: edited in place, not copied again.
  const projected: Options.Publish = projectRabbitMq(projection, riders);
  for (const [key, slot] of SHORT_STRINGS) {
    const value = projected[key];
    // UTF-8 takes at most 3 bytes per UTF-16 unit: most values need no count.
    if (value !== undefined && value.length * 3 > 255 && Buffer.byteLength(value) > 255) {
      oversized(slot);
      delete projected[key];
    }
  }
  const headers = projected.headers as Record<string, unknown>;
  for (const key of INTEGER_HEADERS) {
    const value = headers[key];
    if (typeof value === 'number') headers[key] = amqpInteger(value);
  }
  return projected;
}

/**
 * The properties of a retry copy or of a failed / unknown-URN / poison
 * dead-letter record: the delivery's properties ({@link copyProperties}) with
 * every contract slot rebuilt from the record's own bytes through the core's
 * projection, so `x-attempts` says the counted attempt the body says and a
 * record that is not an envelope (a poison record) claims no envelope field.
 * A slot the record's body cannot fit in a short string is left out: the
 * copy must still be written.
 */
export function recordProperties(original: MessageProperties, record: Buffer): Options.Publish {
  const copy = copyProperties(original, Object.fromEntries(CONTRACT_HEADERS.map((key) => [key, undefined])));
  for (const [key] of SHORT_STRINGS) delete copy[key];
  const projected = amqpProperties(recordProjection(record), undefined, () => undefined);
  return { ...copy, ...projected, headers: { ...copy.headers, ...projected.headers } };
}

const CONTRACT_HEADERS = [SCHEMA_VERSION_HEADER, SOURCE_LANG_HEADER, ATTEMPTS_HEADER];

/**
 * The properties of a copy of a delivered message (a retry, a dead-letter
 * record): the original's, persistent, without the headers the broker added
 * (`x-death`, …) and without `user_id` and `expiration`, which belong to the
 * original publish. `set` overrides headers; a `undefined` value removes one.
 */
export function copyProperties(
  original: MessageProperties,
  set: Readonly<Record<string, unknown>> = {},
): Options.Publish {
  const headers: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(original.headers ?? {})) {
    if (!BROKER_HEADERS.test(key) && value !== undefined) headers[key] = retype(key, value);
  }
  for (const [key, value] of Object.entries(set)) {
    if (value === undefined) delete headers[key];
    else headers[key] = value;
  }
  const copy: Options.Publish = { deliveryMode: 2, headers };
  const keep = ['type', 'correlationId', 'messageId', 'appId', 'contentType', 'contentEncoding', 'priority', 'timestamp', 'replyTo'] as const;
  for (const key of keep) {
    const value = (original as unknown as Record<string, unknown>)[key];
    if (value !== undefined && value !== null) (copy as Record<string, unknown>)[key] = value;
  }
  return copy;
}

/** Keeps the contract integers integers when a header is copied (amqplib decodes them to plain numbers). */
function retype(key: string, value: unknown): unknown {
  if ((key === SCHEMA_VERSION_HEADER || key === ATTEMPTS_HEADER) && typeof value === 'number' && Number.isInteger(value)) {
    return amqpInteger(value);
  }
  return value;
}

/**
 * Delivered headers as the core sees them: strings, numbers, booleans and
 * null. Byte strings become UTF-8 text, timestamps their epoch seconds;
 * nested tables and arrays (such as `x-death`) are left out.
 */
export function plainHeaders(headers: Readonly<Record<string, unknown>> | undefined): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  if (headers === undefined) return out;
  // for…in over an own-keys-only record: no entries array per delivery (this runs for every message).
  for (const key in headers) {
    if (!Object.hasOwn(headers, key)) continue;
    const plain = plainValue(headers[key]);
    if (plain !== undefined) out[key] = plain;
  }
  return out;
}

function plainValue(value: unknown): HeaderValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'object' && (value as { '!'?: unknown })['!'] === 'timestamp') {
    const inner = (value as { value?: unknown }).value;
    return typeof inner === 'number' ? inner : undefined;
  }
  return undefined;
}
