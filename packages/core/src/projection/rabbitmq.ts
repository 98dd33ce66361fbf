import { hasInt, hasText, toProjection, usableRiders, type ProjectionSource, type Riders } from './source.js';

/** AMQP 0-9-1 publish properties (amqplib's option names) projected from an envelope. */
export interface RabbitMqProjection {
  /** The URN. */
  type?: string;
  /** `trace_id`. */
  correlationId?: string;
  /** `meta.id`. */
  messageId?: string;
  appId: 'babelqueue';
  contentType: 'application/json';
  contentEncoding: 'utf-8';
  /** 2: persistent. */
  deliveryMode: 2;
  /** Native-typed headers: `x-schema-version` and `x-attempts` are integers; riders are strings. */
  headers: Record<string, string | number>;
}

/**
 * The RabbitMQ projection (FACTS §4): `type` = URN, `correlation_id` =
 * trace_id, `message_id` = meta.id, `app_id` "babelqueue", JSON content,
 * persistent, headers `x-schema-version` (integer), `x-source-lang`,
 * `x-attempts` (integer). Riders join the headers; a contract header wins.
 */
export function projectRabbitMq(source: ProjectionSource, riders?: Riders): RabbitMqProjection {
  const p = toProjection(source);
  const headers: Record<string, string | number> = {};
  if (hasInt(p.schemaVersion)) headers['x-schema-version'] = p.schemaVersion;
  if (hasText(p.lang)) headers['x-source-lang'] = p.lang;
  if (hasInt(p.attempts)) headers['x-attempts'] = p.attempts;
  for (const [key, value] of usableRiders(riders, CONTRACT_HEADERS)) headers[key] = value;
  const out: RabbitMqProjection = {
    appId: 'babelqueue',
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    deliveryMode: 2,
    headers,
  };
  if (hasText(p.urn)) out.type = p.urn;
  if (hasText(p.traceId)) out.correlationId = p.traceId;
  if (hasText(p.messageId)) out.messageId = p.messageId;
  return out;
}

const CONTRACT_HEADERS = { 'x-schema-version': 1, 'x-source-lang': 1, 'x-attempts': 1 };
