import { createHash } from 'node:crypto';
import type { RecordSummary } from './records.js';

/**
 * Failure groups: records that failed the same way, as ServicePulse groups
 * them. A group is the URN, the exception and the error text with the parts
 * that differ from one failure to the next masked ({@link maskError}), so
 * "order 1042 not found" and "order 77 not found" are one group.
 */

/** What a group is made of. */
export interface GroupSignature {
  readonly urn: string | null;
  readonly exception: string | null;
  /** The error with ids and numbers masked. */
  readonly error: string | null;
}

/** One failure group and its aggregates over the records scanned. */
export interface FailureGroup extends GroupSignature {
  /** The group's key: what the `group` filter takes (12 hex digits). */
  readonly id: string;
  readonly count: number;
  /** `dead_letter.reason` of its records (one group can mix `failed` and `unknown_urn` only if they share all three parts). */
  readonly reasons: Record<string, number>;
  /** The earliest and latest `failed_at` (ms UTC) among its records; null when none has one. */
  readonly first_failed_at: number | null;
  readonly last_failed_at: number | null;
  /** Records by the language that produced them (`meta.lang`; `?` when the envelope names none). */
  readonly langs: Record<string, number>;
}

/**
 * The masks, in order: what is replaced first cannot be taken apart by a
 * later one (a UUID's digits are not numbers). Hex ids need a digit and at
 * least 8 characters, so words such as "deadbeef" stay but "5f3a9c01" goes.
 */
const MASKS: readonly [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '<hex>'],
  [/\d+(?:[.,:]\d+)*/g, '<n>'],
];

/** The error text with UUIDs, hex ids and numbers replaced by `<uuid>`, `<hex>` and `<n>`. */
export function maskError(error: string): string {
  let masked = error;
  for (const [pattern, placeholder] of MASKS) masked = masked.replace(pattern, placeholder);
  return masked;
}

/** The signature of a record's failure. */
export function signatureOf(record: Pick<RecordSummary, 'urn' | 'exception' | 'error'>): GroupSignature {
  return { urn: record.urn, exception: record.exception, error: record.error === null ? null : maskError(record.error) };
}

/** Group ids computed lately, by their signature's text: a scan hashes each distinct group once, not each record. */
const ids = new Map<string, string>();
/** Ids remembered at most (the map starts over when full). */
const IDS_KEPT = 4096;

/** The group id of a signature: the first 12 hex digits of a SHA-256 over its three parts. */
export function groupIdOf(signature: GroupSignature): string {
  const part = (value: string | null) => (value === null ? '\u0000null' : value);
  const key = `${part(signature.urn)}\u0001${part(signature.exception)}\u0001${part(signature.error)}`;
  let id = ids.get(key);
  if (id === undefined) {
    id = createHash('sha256').update(key).digest('hex').slice(0, 12);
    if (ids.size >= IDS_KEPT) ids.clear();
    ids.set(key, id);
  }
  return id;
}

/** The group id of a record. */
export function groupOf(record: Pick<RecordSummary, 'urn' | 'exception' | 'error'>): string {
  return groupIdOf(signatureOf(record));
}

/** Distinct groups one scan keeps at most; the records of any further group are counted as `ungrouped`. */
export const MAX_GROUPS = 2000;

type Tallied = { -readonly [K in keyof FailureGroup]: FailureGroup[K] };

/** What a group counts of a record. */
export type GroupedFields = Pick<RecordSummary, 'urn' | 'exception' | 'error' | 'kind' | 'reason' | 'lang' | 'failed_at'>;

/**
 * Counts records into groups while a scan streams: only the aggregates are
 * kept (at most {@link MAX_GROUPS} groups), never the records.
 */
export class GroupTally {
  private readonly groups = new Map<string, Tallied>();
  /** Records whose group did not fit under {@link MAX_GROUPS}. */
  ungrouped = 0;

  add(record: GroupedFields): void {
    const signature = signatureOf(record);
    const id = groupIdOf(signature);
    let group = this.groups.get(id);
    if (group === undefined) {
      if (this.groups.size >= MAX_GROUPS) {
        this.ungrouped += 1;
        return;
      }
      group = { id, ...signature, count: 0, reasons: {}, first_failed_at: null, last_failed_at: null, langs: {} };
      this.groups.set(id, group);
    }
    group.count += 1;
    const reason = record.kind === 'no-dead-letter' || record.kind === 'not-json' ? 'none' : record.reason || 'none';
    group.reasons[reason] = (group.reasons[reason] ?? 0) + 1;
    const lang = record.lang ?? '?';
    group.langs[lang] = (group.langs[lang] ?? 0) + 1;
    if (record.failed_at !== null) {
      group.first_failed_at = group.first_failed_at === null ? record.failed_at : Math.min(group.first_failed_at, record.failed_at);
      group.last_failed_at = group.last_failed_at === null ? record.failed_at : Math.max(group.last_failed_at, record.failed_at);
    }
  }

  /** The `top` largest groups, largest first (ties: the one that failed last first). */
  top(top: number): FailureGroup[] {
    return [...this.groups.values()]
      .sort((a, b) => b.count - a.count || (b.last_failed_at ?? 0) - (a.last_failed_at ?? 0) || a.id.localeCompare(b.id))
      .slice(0, top);
  }

  /** How many distinct groups were seen (up to {@link MAX_GROUPS}). */
  get size(): number {
    return this.groups.size;
  }
}
