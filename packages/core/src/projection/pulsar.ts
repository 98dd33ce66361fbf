import { hasInt, hasText, toProjection, usableRiders, type ProjectionSource, type Riders } from './source.js';

/**
 * The Pulsar message properties (FACTS §4), all strings: `bq-job`,
 * `bq-trace-id`, `bq-message-id`, `bq-schema-version`, `bq-source-lang`,
 * `bq-attempts`. Riders join them; a contract key (including `bq-delay`) wins.
 * Never set `eventTime`: the publish time is broker-set.
 */
export function projectPulsar(source: ProjectionSource, riders?: Riders): Record<string, string> {
  const p = toProjection(source);
  const props: Record<string, string> = {};
  if (hasText(p.urn)) props['bq-job'] = p.urn;
  if (hasText(p.traceId)) props['bq-trace-id'] = p.traceId;
  if (hasText(p.messageId)) props['bq-message-id'] = p.messageId;
  if (hasInt(p.schemaVersion)) props['bq-schema-version'] = String(p.schemaVersion);
  if (hasText(p.lang)) props['bq-source-lang'] = p.lang;
  if (hasInt(p.attempts)) props['bq-attempts'] = String(p.attempts);
  for (const [key, value] of usableRiders(riders, CONTRACT_PROPERTIES)) props[key] = value;
  return props;
}

const CONTRACT_PROPERTIES = {
  'bq-job': 1,
  'bq-trace-id': 1,
  'bq-message-id': 1,
  'bq-schema-version': 1,
  'bq-source-lang': 1,
  'bq-attempts': 1,
  'bq-delay': 1,
};
