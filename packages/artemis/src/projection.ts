import { isUtf8 } from 'node:buffer';
import rhea, { type Message as AmqpMessage } from 'rhea';
import type { ArtemisProjection, HeaderValue } from '@babelqueue/core';

/** Message annotation carrying the URN: JMSType in the AMQP-JMS mapping. */
export const JMS_TYPE_ANNOTATION = 'x-opt-jms-type';
/** Message annotation of a scheduled delivery: absolute epoch ms. */
export const DELIVERY_TIME_ANNOTATION = 'x-opt-delivery-time';
/** Application property the version gate reads. */
export const SCHEMA_VERSION_PROPERTY = 'bq_schema_version';
/** Application property mirroring the body's attempts. */
export const ATTEMPTS_PROPERTY = 'bq_attempts';
/** Application property mirroring a delay in ms (spec: "also mirrored on a bq_delay property"). */
export const DELAY_PROPERTY = 'bq_delay';
/** Application property naming the producer family. */
export const APP_ID_PROPERTY = 'bq_app_id';

const DATA_SECTION = 0x75;

/**
 * The body section for envelope bytes. Valid UTF-8 (every envelope) goes as an
 * AMQP-value string, the form the other SDKs send and a JMS consumer reads as
 * a TextMessage; other bytes (a raw re-emit of a foreign body) go as a data
 * section, since a string section could not carry them byte for byte.
 */
export function bodySection(body: Buffer): unknown {
  return isUtf8(body) ? body.toString('utf8') : rhea.message.data_section(body);
}

/** The AMQP message for a publish: body, projection, durable, and a delay as `x-opt-delivery-time` + `bq_delay`. */
export function outgoingMessage(body: Buffer, projection: ArtemisProjection, delayMs = 0): AmqpMessage {
  const message: AmqpMessage = {
    durable: true,
    body: bodySection(body),
    content_type: projection.content_type,
    message_annotations: { ...projection.message_annotations },
    application_properties: { ...projection.application_properties },
  };
  if (projection.subject !== undefined) message.subject = projection.subject;
  if (projection.message_id !== undefined) message.message_id = projection.message_id;
  if (projection.correlation_id !== undefined) message.correlation_id = projection.correlation_id;
  if (projection.creation_time !== undefined) message.creation_time = new Date(projection.creation_time);
  schedule(message, delayMs);
  return message;
}

/**
 * A copy of a received message with a new body, for a re-send (retry copy,
 * DLQ record): the properties and annotations ride along, the header counters
 * start afresh, `x-opt-delivery-time` is set only for a new delay, and the
 * application properties get `edits` (undefined removes one).
 */
export function copyMessage(
  received: AmqpMessage,
  body: Buffer,
  edits: Readonly<Record<string, string | undefined>>,
  delayMs = 0,
): AmqpMessage {
  const message: AmqpMessage = { durable: true, body: bodySection(body) };
  for (const field of COPIED_FIELDS) {
    const value: unknown = received[field];
    if (value !== undefined && value !== null) (message as unknown as Record<string, unknown>)[field] = value;
  }
  const annotations: Record<string, unknown> = { ...(received.message_annotations as Record<string, unknown> | undefined) };
  delete annotations[DELIVERY_TIME_ANNOTATION];
  delete annotations['x-opt-delivery-delay'];
  message.message_annotations = annotations;
  const properties: Record<string, unknown> = { ...(received.application_properties as Record<string, unknown> | undefined) };
  for (const [key, value] of Object.entries(edits)) {
    if (value === undefined) delete properties[key];
    else properties[key] = value;
  }
  delete properties[DELAY_PROPERTY];
  message.application_properties = properties;
  schedule(message, delayMs);
  return message;
}

/** The message fields of the Artemis projection: a projected copy sets them from its own body, never keeps the delivery's. */
const PROJECTED_FIELDS = ['subject', 'message_id', 'correlation_id', 'creation_time', 'content_type'] as const;
/** The `bq_` application properties of the contract (riders never take these names). */
const CONTRACT_PROPERTIES = [SCHEMA_VERSION_PROPERTY, 'bq_source_lang', ATTEMPTS_PROPERTY, APP_ID_PROPERTY, DELAY_PROPERTY];

/**
 * A copy of a received message whose native metadata is `projection` (the
 * projection of the copy's own body: a retry copy, a dead-letter record)
 * instead of what the delivery arrived with: the contract fields, the
 * `x-opt-jms-type` annotation and the `bq_` properties are the projection's;
 * riders (other application properties) and the other message fields and
 * annotations ride along as {@link copyMessage} keeps them.
 */
export function projectedCopy(received: AmqpMessage, body: Buffer, projection: ArtemisProjection, delayMs = 0): AmqpMessage {
  const message = copyMessage(received, body, Object.fromEntries(CONTRACT_PROPERTIES.map((key) => [key, undefined])));
  const fields = message as unknown as Record<string, unknown>;
  for (const field of PROJECTED_FIELDS) delete fields[field];
  const annotations = message.message_annotations as Record<string, unknown>;
  delete annotations[JMS_TYPE_ANNOTATION];
  const projected = outgoingMessage(body, projection, delayMs);
  Object.assign(annotations, projected.message_annotations);
  Object.assign(message.application_properties as Record<string, unknown>, projected.application_properties);
  for (const field of PROJECTED_FIELDS) {
    const value: unknown = (projected as unknown as Record<string, unknown>)[field];
    if (value !== undefined) fields[field] = value;
  }
  return message;
}

/** Immutable message properties a re-send keeps (user-id is the sender's to set, so it is not copied). */
const COPIED_FIELDS = [
  'priority',
  'message_id',
  'to',
  'subject',
  'reply_to',
  'correlation_id',
  'content_type',
  'content_encoding',
  'absolute_expiry_time',
  'creation_time',
  'group_id',
  'group_sequence',
  'reply_to_group_id',
] as const;

function schedule(message: AmqpMessage, delayMs: number): void {
  if (!(delayMs > 0)) return;
  const due = Math.ceil(delayMs);
  (message.message_annotations as Record<string, unknown>)[DELIVERY_TIME_ANNOTATION] = Date.now() + due;
  (message.application_properties as Record<string, unknown>)[DELAY_PROPERTY] = String(due);
}

/**
 * The body bytes of a received message: an AMQP-value string as its UTF-8
 * bytes, a data section (or several, joined) or a binary value as they are.
 * Anything else (a map, a list, a number) cannot be an envelope: `poison`
 * says why, and `body` keeps a JSON rendering for the poison record.
 */
export function readBody(message: AmqpMessage): { body: Buffer; poison?: string } {
  const value: unknown = message.body;
  if (typeof value === 'string') return { body: Buffer.from(value, 'utf8') };
  if (value instanceof Uint8Array) return { body: Buffer.from(value.buffer, value.byteOffset, value.byteLength) };
  if (value === undefined || value === null) return { body: Buffer.alloc(0) };
  const section = value as { typecode?: unknown; content?: unknown; multiple?: unknown };
  if (section.typecode === DATA_SECTION) {
    const parts = (section.multiple === true ? section.content : [section.content]) as Uint8Array[];
    return { body: Buffer.concat(parts.map((part) => Buffer.from(part))) };
  }
  const kind = section.typecode === 0x76 ? 'an AMQP sequence section' : `an AMQP ${typeof value} value`;
  return { body: Buffer.from(render(section.typecode === 0x76 ? section.content : value), 'utf8'), poison: `the body is ${kind}, not bytes or a string` };
}

/** Application properties as plain header values (numbers, strings, booleans, null; anything else as text). */
export function plainProperties(properties: unknown): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  if (typeof properties !== 'object' || properties === null) return out;
  for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
    else if (value instanceof Uint8Array) out[key] = Buffer.from(value).toString('utf8');
    else if (value instanceof Date) out[key] = value.getTime();
    else if (value !== undefined) out[key] = String(value);
  }
  return out;
}

function render(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);
  } catch {
    return String(value);
  }
}
