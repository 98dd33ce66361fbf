import type { ServiceBusMessage, ServiceBusReceivedMessage } from '@azure/service-bus';
import rhea from 'rhea';
import {
  nativeSchemaVersion,
  projectAsb,
  type EnvelopeProjection,
  type HeaderValue,
  type Riders,
} from '@babelqueue/core';

/** The version-gate property (an AMQP-typed application property). */
export const SCHEMA_VERSION_PROPERTY = 'bq-schema-version';
const CREATED_AT_PROPERTY = 'bq-created-at';
const types = rhea.types;

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
  message.applicationProperties = withAmqpTypes(message.applicationProperties ?? {});
  if (options.delayMs !== undefined && options.delayMs > 0) {
    message.scheduledEnqueueTimeUtc = new Date((options.now ?? Date.now()) + options.delayMs);
  }
  if (options.placement?.sessionId !== undefined) message.sessionId = options.placement.sessionId;
  if (options.placement?.partitionKey !== undefined) message.partitionKey = options.placement.partitionKey;
  return message;
}

type ApplicationProperties = NonNullable<ServiceBusMessage['applicationProperties']>;

/**
 * The contract's numeric application properties pinned to the AMQP types the
 * spec names: `bq-schema-version` an int, `bq-created-at` a long (Unix ms).
 * Left to itself, rhea (under @azure/service-bus) encodes a positive JS number
 * as uint or ulong, which the other SDKs read as a different type (a .NET
 * reader gets a boxed ulong where it expects a long). Other values are left as
 * they are.
 */
export function withAmqpTypes(properties: ApplicationProperties): ApplicationProperties {
  const out: ApplicationProperties = { ...properties };
  const version = out[SCHEMA_VERSION_PROPERTY];
  if (typeof version === 'number' && Number.isInteger(version) && version >= -(2 ** 31) && version < 2 ** 31) {
    out[SCHEMA_VERSION_PROPERTY] = amqp(types.wrap_int(version));
  }
  const createdAt = out[CREATED_AT_PROPERTY];
  if (typeof createdAt === 'number' && Number.isSafeInteger(createdAt)) out[CREATED_AT_PROPERTY] = amqp(types.wrap_long(createdAt));
  return out;
}

/**
 * A rhea typed value where @azure/service-bus's typings say number: the SDK
 * hands application properties to rhea unchanged, and rhea encodes a typed
 * value with the type it carries.
 */
function amqp(typed: rhea.Typed): number {
  return typed as unknown as number;
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
