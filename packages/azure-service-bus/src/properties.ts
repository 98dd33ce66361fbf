import type { ServiceBusMessage, ServiceBusReceivedMessage } from '@azure/service-bus';
import {
  acceptsEnvelope,
  decodeEnvelope,
  envelopeProjection,
  nativeSchemaVersion,
  projectAsb,
  type EnvelopeProjection,
  type HeaderValue,
  type Riders,
} from '@babelqueue/core';

/** The version-gate property (an AMQP-typed application property). */
export const SCHEMA_VERSION_PROPERTY = 'bq-schema-version';

/** Per-message fields that are not contract fields (FIFO sessions, partitioned entities). */
export interface Placement {
  readonly sessionId?: string | undefined;
  readonly partitionKey?: string | undefined;
}

/**
 * The Service Bus message for envelope bytes: the body as bytes (a data
 * section, never re-encoded), the native projection (subject, correlationId,
 * messageId, contentType, the three typed `bq-` application properties) with
 * riders beside them, and a delay as `scheduledEnqueueTimeUtc`.
 */
export function toServiceBusMessage(
  body: Buffer,
  projection: EnvelopeProjection | undefined,
  options: { riders?: Riders; delayMs?: number; placement?: Placement; now?: number } = {},
): ServiceBusMessage {
  const message: ServiceBusMessage = projection === undefined
    ? { body, contentType: 'application/json', applicationProperties: { ...(options.riders ?? {}) } }
    : { body, ...projectAsb(projection, options.riders) };
  if (options.delayMs !== undefined && options.delayMs > 0) {
    message.scheduledEnqueueTimeUtc = new Date((options.now ?? Date.now()) + options.delayMs);
  }
  if (options.placement?.sessionId !== undefined) message.sessionId = options.placement.sessionId;
  if (options.placement?.partitionKey !== undefined) message.partitionKey = options.placement.partitionKey;
  return message;
}

/**
 * The projection of a record's own bytes (a retry copy, a failed/unknown-URN
 * DLQ record): its attempts and identity, not the delivery's. A poison record
 * or anything that is not an accepted envelope projects nothing.
 */
export function recordProjection(record: Buffer): EnvelopeProjection | undefined {
  const decoded = decodeEnvelope(record, () => undefined);
  return acceptsEnvelope(decoded) ? envelopeProjection(decoded) : undefined;
}

/** The body bytes of a received message: a data section as is, text as UTF-8; undefined for anything else. */
export function bodyBytes(message: ServiceBusReceivedMessage): Buffer | undefined {
  const body: unknown = message.body;
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return undefined;
}

/** Application properties as the runtime's header values (dates as epoch ms; binary and other types left out). */
export function plainProperties(message: ServiceBusReceivedMessage): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  for (const [key, value] of Object.entries(message.applicationProperties ?? {})) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) out[key] = value;
    else if (value instanceof Date) out[key] = value.getTime();
  }
  return out;
}

/**
 * The version gate's reading of `bq-schema-version`. Integral 1 and "1" pass,
 * null counts as absent. JavaScript cannot tell a float 1.0 from an integer 1
 * (both arrive as the number 1), so 1.0 passes here, as the spec allows for
 * such runtimes; 1.5 or 2 do not.
 */
export function schemaVersionOf(message: ServiceBusReceivedMessage): string | undefined {
  return nativeSchemaVersion(message.applicationProperties?.[SCHEMA_VERSION_PROPERTY]);
}
