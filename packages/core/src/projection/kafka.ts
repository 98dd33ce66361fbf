import { BQ_CONTRACT_KEYS, bqStrings } from './bq-strings.js';
import { hasInt, toProjection, type ProjectionSource, type Riders } from './source.js';

/** Kafka record metadata projected from an envelope; the value is set by the caller. */
export interface KafkaProjection {
  /** UTF-8 string headers. */
  headers: Record<string, string>;
  /** Record timestamp = `meta.created_at` (ms, as KafkaJS wants it: a string). */
  timestamp?: string;
}

/**
 * The Kafka projection (FACTS §4): headers `bq-job`, `bq-trace-id`,
 * `bq-message-id`, `bq-schema-version`, `bq-source-lang`, `bq-attempts`
 * (authoritative on consume), all strings; the record timestamp mirrors
 * `meta.created_at`. Riders join the headers; a contract key (including
 * `bq-delay` and `bq-original-topic`) wins.
 */
export function projectKafka(source: ProjectionSource, riders?: Riders): KafkaProjection {
  const p = toProjection(source);
  const headers = bqStrings(p, riders, CONTRACT_HEADERS);
  const out: KafkaProjection = { headers };
  if (hasInt(p.createdAt)) out.timestamp = String(p.createdAt);
  return out;
}

const CONTRACT_HEADERS = { ...BQ_CONTRACT_KEYS, 'bq-original-topic': 1 };
