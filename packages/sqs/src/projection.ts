import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { NO_PROJECTION, projectSqs, recordProjection, SQS_MAX_ATTRIBUTES } from '@babelqueue/core';

/** SQS MessageAttributes as the client sends and receives them. */
export type Attributes = Record<string, MessageAttributeValue>;

/** The attribute the version gate reads. */
export const SCHEMA_VERSION_ATTRIBUTE = 'bq-schema-version';

/** The attributes of the SQS projection (FACTS §4); a rider never takes one of these names. */
const CONTRACT_ATTRIBUTES = ['bq-job', 'bq-trace-id', 'bq-message-id', 'bq-schema-version', 'bq-source-lang', 'bq-created-at'];

/**
 * Out-of-band headers alone (a raw record, a redrive) as String attributes,
 * with the projection's rules: blank keys and values dropped, contract names
 * never taken by a rider, sorted, at most 10.
 */
export function riderAttributes(headers: Readonly<Record<string, string>> | undefined): Attributes {
  return projectSqs(NO_PROJECTION, headers);
}

/** The String and Number attributes of a received message, as strings (Binary ones are left out). */
export function headersOf(attributes: Attributes | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (typeof value.StringValue === 'string') out[name] = value.StringValue;
  }
  return out;
}

/** A received message's attributes, for a record that carries them on (the values SQS accepts on a send). */
export function copyAttributes(attributes: Attributes | undefined, without: readonly string[] = []): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (without.includes(name)) continue;
    out[name] = {
      DataType: value.DataType,
      ...(value.StringValue !== undefined ? { StringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { BinaryValue: value.BinaryValue } : {}),
    };
  }
  return out;
}

/**
 * The attributes of a dead-letter record (failed, unknown URN, poison): the
 * projection of the record's own bytes (a poison record claims no envelope
 * field), then the delivery's other attributes (riders such as traceparent,
 * with their types) in name order while fewer than 10 are set.
 */
export function recordAttributes(record: Buffer, received: Attributes | undefined): Attributes {
  const out: Attributes = projectSqs(recordProjection(record));
  const riders = Object.entries(copyAttributes(received, CONTRACT_ATTRIBUTES)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, value] of riders) {
    if (Object.keys(out).length >= SQS_MAX_ATTRIBUTES) break;
    out[name] = value;
  }
  return out;
}

/**
 * A message's size as SQS counts it against the queue's maximum: the body's
 * bytes plus each attribute's name, data type and value.
 */
export function messageBytes(bodyBytes: number, attributes: Attributes): number {
  let bytes = bodyBytes;
  for (const name of Object.keys(attributes)) {
    const value = attributes[name]!;
    bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType ?? '', 'utf8');
    if (value.StringValue !== undefined) bytes += Buffer.byteLength(value.StringValue, 'utf8');
    if (value.BinaryValue !== undefined) bytes += value.BinaryValue.length;
  }
  return bytes;
}
