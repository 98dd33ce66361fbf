import { hasInt, hasText, toProjection, usableRiders, type ProjectionSource, type Riders } from './source.js';

/** Azure Service Bus message fields (@azure/service-bus names) projected from an envelope; the body is set by the caller. */
export interface AsbProjection {
  /** The URN. */
  subject?: string;
  /** `trace_id`. */
  correlationId?: string;
  /** `meta.id`. */
  messageId?: string;
  contentType: 'application/json';
  /** AMQP-typed: numbers stay numbers. */
  applicationProperties: Record<string, string | number>;
}

/**
 * The Azure Service Bus projection (FACTS §4): Subject = URN, CorrelationId =
 * trace_id, MessageId = meta.id, ContentType JSON, and the three application
 * properties `bq-schema-version` (integer), `bq-source-lang`, `bq-created-at`
 * (ms, integer). Riders join the application properties; a contract key wins.
 */
export function projectAsb(source: ProjectionSource, riders?: Riders): AsbProjection {
  const p = toProjection(source);
  const props: Record<string, string | number> = {};
  if (hasInt(p.schemaVersion)) props['bq-schema-version'] = p.schemaVersion;
  if (hasText(p.lang)) props['bq-source-lang'] = p.lang;
  if (hasInt(p.createdAt)) props['bq-created-at'] = p.createdAt;
  for (const [key, value] of usableRiders(riders, CONTRACT_PROPERTIES)) props[key] = value;
  const out: AsbProjection = { contentType: 'application/json', applicationProperties: props };
  if (hasText(p.urn)) out.subject = p.urn;
  if (hasText(p.traceId)) out.correlationId = p.traceId;
  if (hasText(p.messageId)) out.messageId = p.messageId;
  return out;
}

const CONTRACT_PROPERTIES = { 'bq-schema-version': 1, 'bq-source-lang': 1, 'bq-created-at': 1 };
