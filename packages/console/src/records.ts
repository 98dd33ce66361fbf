import { createHash } from 'node:crypto';
import { resolveUrn, type HeaderValue, type ScannedRecord } from '@babelqueue/core';

/**
 * What a DLQ record is, as the console tells them apart:
 * - `dead-letter`: an envelope with a `dead_letter` block (`failed`, `unknown_urn`);
 * - `poison`: `dead_letter.reason` is `poison` (a `raw` wrapper or an object without identity);
 * - `no-dead-letter`: a JSON object without the block (a version-gated record, or written by a tool);
 * - `not-json`: bytes that are not a UTF-8 JSON object.
 */
export type RecordKind = 'dead-letter' | 'poison' | 'no-dead-letter' | 'not-json';

/** One row of the records table: only what a glance needs, never the payload. */
export interface RecordSummary {
  /** Position from the head when it was read (moves as records ahead of it leave). */
  readonly index: number;
  /** The broker's own address where it has one (`partition 0, offset 12`). */
  readonly location: string | null;
  /** The first 16 hex digits of the body's SHA-256: with `index`, how actions name the record. */
  readonly hash: string;
  readonly size: number;
  readonly kind: RecordKind;
  /** `dead_letter.reason` ("" without a block). */
  readonly reason: string;
  readonly error: string | null;
  readonly exception: string | null;
  /** `dead_letter.attempts`: the counted attempt that failed. */
  readonly attempts: number | null;
  readonly original_queue: string | null;
  /** `dead_letter.failed_at`, ms UTC. */
  readonly failed_at: number | null;
  /** `meta.lang`: the language that produced the message. */
  readonly lang: string | null;
  /** `dead_letter.lang`: the language that dead-lettered it. */
  readonly dead_letter_lang: string | null;
  readonly trace_id: string | null;
  readonly urn: string | null;
  readonly message_id: string | null;
}

/** Everything about one record, for its full view. Text only: the page inserts it as text nodes. */
export interface RecordDetail extends RecordSummary {
  /** The body as stored: UTF-8 text when it is valid UTF-8, else base64. */
  readonly body: { readonly encoding: 'utf-8' | 'base64'; readonly text: string };
  /** The `dead_letter` block as stored (parsed), or null. */
  readonly dead_letter: unknown;
  /** Native metadata beside the body (AMQP properties and headers, Kafka headers, the Redis frame's headers). */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** The Kafka record key: its text when it is UTF-8, and base64. */
  readonly key: { readonly text: string | null; readonly base64: string } | null;
  /** A poison record's `raw` member decoded: the original bytes as text when they are UTF-8, else hex. */
  readonly raw: { readonly encoding: 'text' | 'base64'; readonly text: string | null; readonly hex: string | null; readonly bytes: number } | null;
}

/** Error text longer than this is cut in a summary (the full view has all of it). */
const SUMMARY_ERROR_CHARS = 400;

const strict = new TextDecoder('utf-8', { fatal: true });

/** The body as a JSON object, or undefined when it is not valid UTF-8 JSON with an object at the top. */
export function parseRecord(body: Buffer): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(strict.decode(body));
  } catch {
    return undefined;
  }
  return isObject(value) ? value : undefined;
}

/** The short fingerprint that names a record in actions. */
export function recordHash(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

/** The table row of a scanned record, with all of its error text (filters search it); {@link clipped} for the table. */
export function summarize(record: ScannedRecord): RecordSummary {
  const parsed = parseRecord(record.body);
  return {
    index: record.index,
    location: record.location ?? null,
    hash: recordHash(record.body),
    size: record.body.length,
    ...describe(parsed),
  };
}

/** The summary with a long error cut, as the table shows it (the full view has all of it). */
export function clipped(summary: RecordSummary): RecordSummary {
  const { error } = summary;
  return error === null || error.length <= SUMMARY_ERROR_CHARS ? summary : { ...summary, error: `${error.slice(0, SUMMARY_ERROR_CHARS)}…` };
}

/** A record's fields that filters, charts and the table read: a summary without its position, fingerprint and size. */
export type Described = Omit<RecordSummary, 'index' | 'location' | 'hash' | 'size'>;

/** The fields of a parsed record (or of a decoded envelope) that filters and the table read. */
export function describe(parsed: Record<string, unknown> | undefined): Described {
  if (parsed === undefined) {
    return {
      kind: 'not-json', reason: '', error: null, exception: null, attempts: null, original_queue: null,
      failed_at: null, lang: null, dead_letter_lang: null, trace_id: null, urn: null, message_id: null,
    };
  }
  const block = isObject(parsed.dead_letter) ? parsed.dead_letter : undefined;
  const meta = isObject(parsed.meta) ? parsed.meta : undefined;
  const reason = text(block?.reason) ?? '';
  return {
    kind: block === undefined ? 'no-dead-letter' : reason === 'poison' ? 'poison' : 'dead-letter',
    reason,
    error: text(block?.error),
    exception: text(block?.exception),
    attempts: integer(block?.attempts),
    original_queue: text(block?.original_queue),
    failed_at: integer(block?.failed_at),
    lang: text(meta?.lang),
    dead_letter_lang: text(block?.lang),
    trace_id: text(parsed.trace_id),
    urn: resolveUrn(parsed),
    message_id: text(meta?.id),
  };
}

/** The full view of a scanned record. */
export function detail(record: ScannedRecord): RecordDetail {
  const parsed = parseRecord(record.body);
  const utf8 = decodeText(record.body);
  return {
    ...summarize(record),
    ...describe(parsed),
    body: utf8 === null ? { encoding: 'base64', text: record.body.toString('base64') } : { encoding: 'utf-8', text: utf8 },
    dead_letter: parsed?.dead_letter ?? null,
    headers: record.headers,
    key: record.key === undefined || record.key === null ? null : { text: decodeText(record.key), base64: record.key.toString('base64') },
    raw: rawOf(parsed),
  };
}

/** A poison wrapper's `raw`: base64 decoded when `raw_encoding` says so, shown as text when it is UTF-8. */
function rawOf(parsed: Record<string, unknown> | undefined): RecordDetail['raw'] {
  if (parsed === undefined || typeof parsed.raw !== 'string') return null;
  if (parsed.raw_encoding !== 'base64') {
    return { encoding: 'text', text: parsed.raw, hex: null, bytes: Buffer.byteLength(parsed.raw) };
  }
  const bytes = Buffer.from(parsed.raw, 'base64');
  const asText = decodeText(bytes);
  return { encoding: 'base64', text: asText, hex: asText === null ? hexDump(bytes) : null, bytes: bytes.length };
}

function decodeText(bytes: Buffer): string | null {
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}

/** Hex in groups of 16 bytes per line, the first 4 KiB. */
function hexDump(bytes: Buffer): string {
  const shown = bytes.subarray(0, 4096);
  const lines: string[] = [];
  for (let i = 0; i < shown.length; i += 16) lines.push(shown.subarray(i, i + 16).toString('hex').replace(/(..)(?!$)/g, '$1 '));
  return lines.join('\n') + (bytes.length > shown.length ? `\n… ${bytes.length - shown.length} more bytes` : '');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function integer(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
