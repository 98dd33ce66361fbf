import { hasInt, hasText, toProjection, usableRiders, type ProjectionSource, type Riders } from './source.js';

/** One SQS MessageAttribute (AWS SDK shape). */
export interface SqsAttribute {
  DataType: 'String' | 'Number';
  StringValue: string;
}

/** SQS accepts at most 10 message attributes. */
export const SQS_MAX_ATTRIBUTES = 10;

/**
 * The SQS MessageAttributes (FACTS §4): `bq-job`, `bq-trace-id`,
 * `bq-message-id`, `bq-source-lang` as String; `bq-schema-version`,
 * `bq-created-at` (ms) as Number. No attempts attribute. Riders are added as
 * String attributes in sorted key order while fewer than 10 attributes are set.
 */
export function projectSqs(source: ProjectionSource, riders?: Riders): Record<string, SqsAttribute> {
  const p = toProjection(source);
  const attributes: Record<string, SqsAttribute> = {};
  if (hasText(p.urn)) attributes['bq-job'] = str(p.urn);
  if (hasText(p.traceId)) attributes['bq-trace-id'] = str(p.traceId);
  if (hasText(p.messageId)) attributes['bq-message-id'] = str(p.messageId);
  if (hasInt(p.schemaVersion)) attributes['bq-schema-version'] = num(p.schemaVersion);
  if (hasText(p.lang)) attributes['bq-source-lang'] = str(p.lang);
  if (hasInt(p.createdAt)) attributes['bq-created-at'] = num(p.createdAt);
  for (const [key, value] of usableRiders(riders, CONTRACT_ATTRIBUTES)) {
    if (Object.keys(attributes).length >= SQS_MAX_ATTRIBUTES) break;
    attributes[key] = str(value);
  }
  return attributes;
}

const CONTRACT_ATTRIBUTES = {
  'bq-job': 1,
  'bq-trace-id': 1,
  'bq-message-id': 1,
  'bq-schema-version': 1,
  'bq-source-lang': 1,
  'bq-created-at': 1,
};

function str(value: string): SqsAttribute {
  return { DataType: 'String', StringValue: value };
}

function num(value: number): SqsAttribute {
  return { DataType: 'Number', StringValue: String(value) };
}
