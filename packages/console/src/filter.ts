import { groupOf } from './groups.js';
import type { RecordSummary } from './records.js';

/** Which records a page, a search or a bulk action covers; every field narrows. */
export interface RecordFilter {
  /** `dead_letter.reason` exactly (`failed`, `unknown_urn`, `poison`), or `none` for records without a block. */
  readonly reason?: string;
  /** A part of the URN, case-insensitive. */
  readonly urn?: string;
  /** `meta.lang` exactly. */
  readonly lang?: string;
  /** `dead_letter.lang` exactly. */
  readonly deadLetterLang?: string;
  /** `failed_at` at or after, ms UTC. */
  readonly from?: number;
  /** `failed_at` at or before, ms UTC. */
  readonly to?: number;
  /** Words that must all appear in `error` or `exception`, case-insensitive. */
  readonly text?: string;
  /**
   * Words that must all appear in the record's `data`, `meta.id`, `trace_id`
   * or `dead_letter` block, case-insensitive. Read from the stored bytes:
   * select records with `select` (search.ts); {@link matches} alone never
   * matches a filter with `find`, so a caller that forgets it narrows, never widens.
   */
  readonly find?: string;
  /** A failure group's id (groups.ts): URN, exception and the masked error. */
  readonly group?: string;
}

/** Columns a page can be sorted by; `position` is the queue's own order (oldest first). */
export const SORT_FIELDS = ['position', 'failed_at', 'attempts', 'reason', 'urn', 'lang', 'original_queue'] as const;
export type SortField = (typeof SORT_FIELDS)[number];

export interface Sort {
  readonly field: SortField;
  readonly descending: boolean;
}

/** A query parameter that does not parse; the API answers 400 with its message. */
export class BadQueryError extends Error {
  override readonly name = 'BadQueryError';
}

/** The filter in a request's query parameters (`reason`, `urn`, `lang`, `dl_lang`, `since`, `until`, `q`, `find`, `group`); blank ones are ignored. */
export function parseFilter(query: (name: string) => string | undefined): RecordFilter {
  const value = (name: string) => {
    const raw = query(name)?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  const time = (name: string) => {
    const raw = value(name);
    if (raw === undefined) return undefined;
    const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
    if (!Number.isFinite(ms)) throw new BadQueryError(`${name} must be ms since the epoch or an ISO date, got "${raw}"`);
    return ms;
  };
  const filter: Record<string, string | number> = {};
  const set = (key: keyof RecordFilter, v: string | number | undefined) => {
    if (v !== undefined) filter[key] = v;
  };
  set('reason', value('reason'));
  set('urn', value('urn'));
  set('lang', value('lang'));
  set('deadLetterLang', value('dl_lang'));
  set('from', time('since'));
  set('to', time('until'));
  set('text', value('q'));
  set('find', value('find'));
  const group = value('group');
  if (group !== undefined && !/^[0-9a-f]{12}$/.test(group)) throw new BadQueryError(`group must be a failure group's id (12 hex digits), got "${group}"`);
  set('group', group);
  return filter as RecordFilter;
}

/** The filter names a request may carry (query parameters, or the keys of a bulk action's `matching`). */
export const FILTER_PARAMS = ['reason', 'urn', 'lang', 'dl_lang', 'since', 'until', 'q', 'find', 'group'] as const;

/**
 * The filter of a bulk action (`"matching"` in a JSON body), checked strictly
 * because a filter that silently drops a part matches more than asked: an
 * unknown key, a value that is not a string (`since`/`until`: also ms as a
 * number) or a filter that narrows nothing is a {@link BadQueryError}. Every
 * record is only ever chosen explicitly, with `"matching": "all"`.
 */
export function parseMatching(value: unknown): RecordFilter | 'all' {
  if (value === 'all') return 'all';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadQueryError(`"matching" must be an object of filters (${FILTER_PARAMS.join(', ')}), or "all" for every record`);
  }
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [key, raw] of entries) {
    if (!(FILTER_PARAMS as readonly string[]).includes(key)) {
      throw new BadQueryError(`unknown filter "${key}" in "matching"; the filters are ${FILTER_PARAMS.join(', ')}`);
    }
    const timeKey = key === 'since' || key === 'until';
    if (typeof raw !== 'string' && !(timeKey && typeof raw === 'number')) {
      throw new BadQueryError(`filter "${key}" in "matching" must be a ${timeKey ? 'string or a number (ms)' : 'string'}, got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`);
    }
  }
  const filter = parseFilter((name) => {
    const raw = (value as Record<string, unknown>)[name];
    return raw === undefined ? undefined : String(raw);
  });
  if (!isFiltering(filter)) throw new BadQueryError('"matching" narrows nothing (no filter, or only blank ones); send "matching": "all" to choose every record');
  return filter;
}

/** The sort in `sort` (a field) and `dir` (`asc` | `desc`). */
export function parseSort(query: (name: string) => string | undefined): Sort {
  const field = query('sort')?.trim() || 'position';
  if (!(SORT_FIELDS as readonly string[]).includes(field)) {
    throw new BadQueryError(`sort must be one of ${SORT_FIELDS.join(', ')}, got "${field}"`);
  }
  const dir = query('dir')?.trim() || 'asc';
  if (dir !== 'asc' && dir !== 'desc') throw new BadQueryError(`dir must be asc or desc, got "${dir}"`);
  return { field: field as SortField, descending: dir === 'desc' };
}

/** True when the filter narrows anything. */
export function isFiltering(filter: RecordFilter): boolean {
  return Object.keys(filter).length > 0;
}

/** The fields {@link matches} reads. */
export type Filterable = Pick<RecordSummary, 'reason' | 'kind' | 'urn' | 'lang' | 'dead_letter_lang' | 'failed_at' | 'error' | 'exception'>;

/** True when `record` passes every part of `filter`; false for any filter with `find` (see {@link RecordFilter.find}). */
export function matches(record: Filterable, filter: RecordFilter): boolean {
  if (filter.find !== undefined) return false;
  if (filter.group !== undefined && groupOf(record) !== filter.group) return false;
  if (filter.reason !== undefined) {
    const reason = record.kind === 'no-dead-letter' || record.kind === 'not-json' ? 'none' : record.reason;
    if (reason !== filter.reason) return false;
  }
  if (filter.urn !== undefined && !(record.urn ?? '').toLowerCase().includes(filter.urn.toLowerCase())) return false;
  if (filter.lang !== undefined && record.lang !== filter.lang) return false;
  if (filter.deadLetterLang !== undefined && record.dead_letter_lang !== filter.deadLetterLang) return false;
  if (filter.from !== undefined && (record.failed_at === null || record.failed_at < filter.from)) return false;
  if (filter.to !== undefined && (record.failed_at === null || record.failed_at > filter.to)) return false;
  if (filter.text !== undefined) {
    const haystack = `${record.error ?? ''}\n${record.exception ?? ''}`.toLowerCase();
    if (!filter.text.toLowerCase().split(/\s+/).every((word) => haystack.includes(word))) return false;
  }
  return true;
}

/** Orders two summaries by `sort`; missing values sort last either way, ties keep queue order. */
export function compare(sort: Sort, a: RecordSummary, b: RecordSummary): number {
  if (sort.field === 'position') return sort.descending ? b.index - a.index : a.index - b.index;
  const x = a[sort.field];
  const y = b[sort.field];
  if (x === null && y === null) return a.index - b.index;
  if (x === null) return 1;
  if (y === null) return -1;
  const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
  return order === 0 ? a.index - b.index : sort.descending ? -order : order;
}
