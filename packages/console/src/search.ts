import type { ScannedRecord } from '@babelqueue/core';
import { matches, type RecordFilter } from './filter.js';
import { describe, parseRecord, recordHash, type Described, type RecordSummary } from './records.js';
import type { ScanBudget, StopReason } from './scan-budget.js';
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
  const fields = selectFields(record, filter);
  if (fields === undefined) return undefined;
  return { index: record.index, location: record.location ?? null, hash: recordHash(record.body), size: record.body.length, ...fields };
}

/**
 * {@link select} without what only a table row needs (the fingerprint, the
 * position): the charts and groups count these, and the body is parsed once.
 */
export function selectFields(record: ScannedRecord, filter: RecordFilter): Described | undefined {
  const { find, ...rest } = filter;
  const words = find === undefined ? undefined : findWords(find);
  if (words !== undefined && !bytesMayHold(record.body, words)) return undefined;
  const parsed = parseRecord(record.body);
  const fields = describe(parsed);
  if (!matches(fields, rest)) return undefined;
  if (words !== undefined && !fieldsHold(parsed, words)) return undefined;
  return fields;
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

/** What {@link findById} answers: the record, or where its search stopped. */
export interface FoundById {
  readonly record: ScannedRecord | undefined;
  /** Records read by this request. */
  readonly scanned: number;
  /** Why it stopped before the end without the record (null: found, or read to the end). */
  readonly stopped: StopReason;
  /** Where to carry on (`from`) when it stopped early; null otherwise. */
  readonly next: number | null;
}

/**
 * Finds one record by `id`: its `meta.id`, or the 16-hex-digit fingerprint
 * of its bytes (records without a `meta.id`, such as poison records). Reads
 * from `from` on until it finds it, reaches the end, or stops early
 * (`budget`); the stored bytes are checked for the id before a record is
 * parsed.
 */
export async function findById(source: RecordSource, dlq: string, id: string, from: number, budget: ScanBudget): Promise<FoundById> {
  const fingerprint = /^[0-9a-f]{16}$/.test(id);
  // JSON may escape other characters in the stored bytes: only plain ids are looked for in the bytes first.
  const needle = /^[A-Za-z0-9._:-]+$/.test(id) ? Buffer.from(id) : undefined;
  let scanned = 0;
  for await (const record of source.read(dlq, from)) {
    const stopped = budget.stopBefore(scanned);
    if (stopped !== null) return { record: undefined, scanned, stopped, next: record.index };
    scanned += 1;
    if (fingerprint && recordHash(record.body) === id) return { record, scanned, stopped: null, next: null };
    if (needle !== undefined && record.body.indexOf(needle) < 0) continue;
    const parsed = parseRecord(record.body);
    const meta = parsed?.meta !== null && typeof parsed?.meta === 'object' ? (parsed.meta as Record<string, unknown>) : undefined;
    if (meta?.id === id) return { record, scanned, stopped: null, next: null };
  }
  return { record: undefined, scanned, stopped: null, next: null };
}
