import { hasInt, hasText, usableRiders, type Riders } from './source.js';
import type { EnvelopeProjection } from '../transport/transport.js';

/** The `bq-` keys a rider can never override on Pulsar (Kafka adds `bq-original-topic`). */
export const BQ_CONTRACT_KEYS = {
  'bq-job': 1,
  'bq-trace-id': 1,
  'bq-message-id': 1,
  'bq-schema-version': 1,
  'bq-source-lang': 1,
  'bq-attempts': 1,
  'bq-delay': 1,
} as const;

/**
 * The string-valued `bq-` contract shared by the Pulsar properties and the
 * Kafka headers: `bq-job`, `bq-trace-id`, `bq-message-id`,
 * `bq-schema-version`, `bq-source-lang`, `bq-attempts`, then the riders (a
 * contract key always wins, so riders never override one).
 */
export function bqStrings(p: EnvelopeProjection, riders: Riders, contract: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  if (hasText(p.urn)) out['bq-job'] = p.urn;
  if (hasText(p.traceId)) out['bq-trace-id'] = p.traceId;
  if (hasText(p.messageId)) out['bq-message-id'] = p.messageId;
  if (hasInt(p.schemaVersion)) out['bq-schema-version'] = String(p.schemaVersion);
  if (hasText(p.lang)) out['bq-source-lang'] = p.lang;
  if (hasInt(p.attempts)) out['bq-attempts'] = String(p.attempts);
  for (const [key, value] of usableRiders(riders, contract)) out[key] = value;
  return out;
}
