import { hasInt, hasText, toProjection, usableRiders, type ProjectionSource, type Riders } from './source.js';

/** AMQP 1.0 message sections (rhea field names) projected from an envelope; the body is set by the caller. */
export interface ArtemisProjection {
  /** `x-opt-jms-type` = the URN (JMSType for AMQP JMS clients). */
  message_annotations: Record<string, string>;
  /** The URN again: Artemis maps `subject` to JMSType for its own (CORE) JMS clients. */
  subject?: string;
  /** `meta.id`, client-set (a CORE JMS client still sees the broker-set JMSMessageID). */
  message_id?: string;
  /** `trace_id` (JMSCorrelationID). */
  correlation_id?: string;
  /** `meta.created_at`, epoch ms (JMSTimestamp). */
  creation_time?: number;
  content_type: 'application/json';
  /** String-valued, JMS-legal (underscore) names. */
  application_properties: Record<string, string>;
}

/**
 * The Artemis projection (FACTS §4): annotation `x-opt-jms-type` = URN,
 * `correlation-id` = trace_id, `creation-time` = created_at, and the string
 * application properties `bq_schema_version`, `bq_source_lang`, `bq_attempts`,
 * `bq_app_id` = "babelqueue". Riders join the application properties; a
 * contract key (including `bq_delay`) wins.
 *
 * Two slots beyond the other SDKs, both measured on Artemis 2.40: `subject` =
 * URN, because a CORE JMS consumer sees JMSType only from `subject` (the
 * annotation arrives there as `JMS_AMQP_MA_x-opt-jms-type`); and the AMQP
 * `message-id` = `meta.id`. No `bq_` property carries `meta.id` (the seed's
 * rule), and the JMSMessageID a CORE JMS consumer reads stays broker-set (the
 * AMQP id arrives as `NATIVE_MESSAGE_ID`), so a plain JMS peer sees what the
 * seed describes while an AMQP reader can correlate on the id.
 */
export function projectArtemis(source: ProjectionSource, riders?: Riders): ArtemisProjection {
  const p = toProjection(source);
  const props: Record<string, string> = {};
  if (hasInt(p.schemaVersion)) props.bq_schema_version = String(p.schemaVersion);
  if (hasText(p.lang)) props.bq_source_lang = p.lang;
  if (hasInt(p.attempts)) props.bq_attempts = String(p.attempts);
  props.bq_app_id = 'babelqueue';
  for (const [key, value] of usableRiders(riders, CONTRACT_PROPERTIES)) props[key] = value;
  const out: ArtemisProjection = {
    message_annotations: {},
    content_type: 'application/json',
    application_properties: props,
  };
  if (hasText(p.urn)) {
    out.message_annotations['x-opt-jms-type'] = p.urn;
    out.subject = p.urn;
  }
  if (hasText(p.messageId)) out.message_id = p.messageId;
  if (hasText(p.traceId)) out.correlation_id = p.traceId;
  if (hasInt(p.createdAt)) out.creation_time = p.createdAt;
  return out;
}

const CONTRACT_PROPERTIES = {
  bq_schema_version: 1,
  bq_source_lang: 1,
  bq_attempts: 1,
  bq_app_id: 1,
  bq_delay: 1,
};
