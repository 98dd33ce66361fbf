import { nativeSchemaVersion, reconcileKafkaAttempts, type HeaderValue, type KafkaHeaderValue } from '@babelqueue/core';
import type { IHeaders } from 'kafkajs';

/** The `bq-` record header names of the Kafka binding. */
export const KafkaHeader = {
  JOB: 'bq-job',
  TRACE_ID: 'bq-trace-id',
  MESSAGE_ID: 'bq-message-id',
  SCHEMA_VERSION: 'bq-schema-version',
  SOURCE_LANG: 'bq-source-lang',
  /** Authoritative on consume: Kafka has no native delivery count. */
  ATTEMPTS: 'bq-attempts',
  /** Tier delay in ms; only on retry-topic records. */
  DELAY: 'bq-delay',
  /** The work topic a retry-topic record goes back to; only on retry-topic records. */
  ORIGINAL_TOPIC: 'bq-original-topic',
} as const;

/** Record headers as kafkajs hands them over (a repeated key arrives as an array). */
export type RawHeaders = IHeaders;

/**
 * The value of one header as text: the last occurrence of a repeated key,
 * `null` for a header present with a null value, `undefined` when absent.
 */
export function headerText(headers: RawHeaders | undefined, name: string): string | null | undefined {
  if (headers === undefined || !Object.prototype.hasOwnProperty.call(headers, name)) return undefined;
  const value = headers[name];
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  if (last === undefined || last === null) return null;
  return Buffer.isBuffer(last) ? last.toString('utf8') : String(last);
}

/** Received headers as the core's `Delivery.headers` (UTF-8 text; null stays null). */
export function deliveryHeaders(headers: RawHeaders | undefined): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  for (const name of Object.keys(headers ?? {})) {
    const text = headerText(headers, name);
    if (text !== undefined) out[name] = text;
  }
  return out;
}

/**
 * The version-gate value: the `bq-schema-version` header (its last occurrence)
 * as UTF-8 text, untrimmed, or undefined when it is absent, blank or present
 * with a null value (all count as absent). The core's `isVersionGated` decides.
 */
export function kafkaSchemaVersion(headers: RawHeaders | undefined): string | undefined {
  // "1" as every SDK writes it, read without decoding text (once per consumed record).
  const raw = headers?.[KafkaHeader.SCHEMA_VERSION];
  if (raw instanceof Uint8Array && raw.length === 1 && raw[0] === 0x31 && Object.prototype.hasOwnProperty.call(headers, KafkaHeader.SCHEMA_VERSION)) return '1';
  return nativeSchemaVersion(headerText(headers, KafkaHeader.SCHEMA_VERSION));
}

/**
 * Kafka attempts reconciliation: the `bq-attempts` header when present
 * (authoritative, even when lower than the body), else the body's own count.
 * Not a max.
 */
export function kafkaAttempts(headers: RawHeaders | undefined, bodyAttempts: number): number {
  const raw = headers?.[KafkaHeader.ATTEMPTS];
  return digits(raw) ?? reconcileKafkaAttempts(bodyAttempts, raw as KafkaHeaderValue);
}

/**
 * A header value of 1 to 15 ASCII digits as its number (exact: below 2^53),
 * read without decoding text; undefined for anything else, which takes the
 * core's full reading (trim, repeats, null, blank, non-numeric).
 */
function digits(value: unknown): number | undefined {
  if (!(value instanceof Uint8Array) || value.length === 0 || value.length > 15) return undefined;
  let n = 0;
  // An index loop: for…of would run the array iterator for every record's one or two bytes.
  for (let i = 0; i < value.length; i++) {
    const byte = value[i]!;
    if (byte < 0x30 || byte > 0x39) return undefined;
    n = n * 10 + (byte - 0x30);
  }
  return n;
}

/**
 * A copy of received headers with `set` applied and `drop` removed, the raw
 * bytes of every other header kept as received (re-emits are surgical). A
 * header received with a null value is left out: kafkajs cannot write a null
 * header value, and the binding reads a null value as absent anyway.
 */
export function editHeaders(
  headers: RawHeaders | undefined,
  set: Readonly<Record<string, string>>,
  drop: readonly string[] = [],
): RawHeaders {
  const out: RawHeaders = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (drop.includes(name) || name in set) continue;
    const kept = Array.isArray(value) ? value.filter((v) => v !== null && v !== undefined) : value;
    if (kept === null || kept === undefined || (Array.isArray(kept) && kept.length === 0)) continue;
    out[name] = kept;
  }
  return Object.assign(out, set);
}
