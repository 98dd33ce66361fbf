import type { ScannedRecord } from '@babelqueue/core';
import { matches, type RecordFilter } from './filter.js';
import { describe, parseRecord, recordHash, summarize, type RecordSummary } from './records.js';
import type { RecordSource } from './source.js';

/**
 * Finding records: the `find` search and open-by-id.
 *
 * `find` takes words that must all appear (any case) in the record's
 * `data` (as JSON text), `meta.id`, `trace_id` or its `dead_letter` block
 * (error, exception, reason, original queue). Most records of a big DLQ do
 * not match, so the stored bytes are checked first: a record whose text
 * lacks a word is passed over without being parsed or fingerprinted.
 */

/** The words of a `find` search, lower-cased. */
export function findWords(find: string): string[] {
  return find.toLowerCase().split(/\s+/).filter((word) => word !== '');
}

/**
 * The summary of `record` when it passes `filter` (every field, `find`
 * included), else undefined. Pages, charts, groups and bulk actions select
 * records through it.
 */
export function select(record: ScannedRecord, filter: RecordFilter): RecordSummary | undefined {
  const { find, ...rest } = filter;
  const words = find === undefined ? undefined : findWords(find);
  if (words !== undefined && !bytesMayHold(record.body, words)) return undefined;
  const summary = summarize(record);
  if (!matches(summary, rest)) return undefined;
  if (words !== undefined && !fieldsHold(parseRecord(record.body), words)) return undefined;
  return summary;
}

/** True when a decoded envelope (the core redrive's view of a record) passes `filter`, `find` included. */
export function matchesParsed(parsed: Record<string, unknown> | undefined, filter: RecordFilter): boolean {
  const { find, ...rest } = filter;
  return matches(describe(parsed), rest) && (find === undefined || fieldsHold(parsed, findWords(find)));
}

/**
 * The cheap check: every word occurs somewhere in the stored text. Words
 * JSON may escape in the stored bytes (non-ASCII, quotes, backslashes,
 * control characters) are left to the field check.
 */
function bytesMayHold(body: Buffer, words: readonly string[]): boolean {
  let text: string | undefined;
  for (const word of words) {
    if (!/^[\x20-\x7e]+$/.test(word) || /["\\/]/.test(word)) continue;
    text ??= body.toString('latin1').toLowerCase();
    if (!text.includes(word)) return false;
  }
  return true;
}

/** Every word occurs in `data`, `meta.id`, `trace_id` or the `dead_letter` block. */
function fieldsHold(parsed: Record<string, unknown> | undefined, words: readonly string[]): boolean {
  if (parsed === undefined) return false;
  const meta = parsed.meta !== null && typeof parsed.meta === 'object' ? (parsed.meta as Record<string, unknown>) : undefined;
  const parts = [
    parsed.data === undefined ? '' : JSON.stringify(parsed.data),
    typeof meta?.id === 'string' ? meta.id : '',
    typeof parsed.trace_id === 'string' ? parsed.trace_id : '',
    parsed.dead_letter === undefined ? '' : JSON.stringify(parsed.dead_letter),
    // A poison record's original bytes, as the consumer saw them.
    typeof parsed.raw === 'string' ? parsed.raw : '',
  ];
  const haystack = parts.join('\n').toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/**
 * Finds one record by `id`: its `meta.id`, or the 16-hex-digit fingerprint
 * of its bytes (records without a `meta.id`, such as poison records). Reads
 * from the head up to `scanLimit` records; the stored bytes are checked for
 * the id before a record is parsed. Undefined when it is not there.
 */
export async function findById(source: RecordSource, dlq: string, id: string, scanLimit: number): Promise<{ record: ScannedRecord; scanned: number } | { record: undefined; scanned: number }> {
  const fingerprint = /^[0-9a-f]{16}$/.test(id);
  // JSON may escape other characters in the stored bytes: only plain ids are looked for in the bytes first.
  const needle = /^[A-Za-z0-9._:-]+$/.test(id) ? Buffer.from(id) : undefined;
  let scanned = 0;
  for await (const record of source.read(dlq, 0)) {
    if (scanned >= scanLimit) break;
    scanned += 1;
    if (fingerprint && recordHash(record.body) === id) return { record, scanned };
    if (needle !== undefined && record.body.indexOf(needle) < 0) continue;
    const parsed = parseRecord(record.body);
    const meta = parsed?.meta !== null && typeof parsed?.meta === 'object' ? (parsed.meta as Record<string, unknown>) : undefined;
    if (meta?.id === id) return { record, scanned };
  }
  return { record: undefined, scanned };
}
