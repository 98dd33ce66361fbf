import { compare, type RecordFilter, type Sort } from './filter.js';
import { clipped, type RecordSummary } from './records.js';
import { ScanBudget, type StopReason } from './scan-budget.js';
import { select } from './search.js';
import type { ReadMode, RecordSource } from './source.js';

/** One request for a page of records. */
export interface PageQuery {
  readonly filter: RecordFilter;
  readonly sort: Sort;
  /** Queue order: where the scan starts (the previous page's `next`). */
  readonly from: number;
  /** Sorted: how many sorted matches to skip. */
  readonly offset: number;
  readonly limit: number;
}

/** Bounds that keep one request's memory and time small whatever the DLQ holds. */
export interface PageLimits {
  /** Records one request reads at most. */
  readonly scanLimit: number;
  /** How long one request reads at most (ms) before it answers with what it has. */
  readonly budgetMs: number;
  /** A sorted page keeps at most this many rows while it scans (`offset + limit` must fit). */
  readonly sortWindow: number;
}

/** A page, and how much of the DLQ was read to make it ("scanned N of M"). */
export interface Page {
  readonly mode: ReadMode;
  readonly records: RecordSummary[];
  /** Records waiting (M), or null when the binding cannot tell. */
  readonly depth: number | null;
  /** Where this scan started. */
  readonly from: number;
  /** Records read for this page (N). */
  readonly scanned: number;
  /** Matching records among those read (all of them for a sorted page; up to the page for queue order). */
  readonly matched: number;
  /** The scan reached the end of the queue. */
  readonly complete: boolean;
  /** The scan stopped before the end (its time budget or the scan limit): `next` carries on. */
  readonly limited: boolean;
  /** Why it stopped early: `time-budget` or `scan-limit`; null when it did not. */
  readonly stopped: StopReason;
  /** More matching records follow. */
  readonly has_more: boolean;
  /** Queue order: the `from` of the next page (null when there is none). */
  readonly next: number | null;
}

/**
 * Reads one page. In queue order it streams from `from` and stops at the
 * page's last match (plus one to know whether more follow), or early (its
 * time budget, `scanLimit`) with the matches found so far and `next` where
 * the scan stopped; sorted, it scans from the head keeping only the best
 * `offset + limit` rows, and when it stops early the order holds among the
 * records scanned (a sorted page cannot carry on). Only the page is held.
 */
export async function readPage(source: RecordSource, dlq: string, query: PageQuery, limits: PageLimits): Promise<Page> {
  const depth = await source.depth(dlq);
  if (query.sort.field === 'position' && !query.sort.descending) return inQueueOrder(source, dlq, query, limits, depth);
  return sorted(source, dlq, query, limits, depth);
}

async function inQueueOrder(source: RecordSource, dlq: string, query: PageQuery, limits: PageLimits, depth: number | null): Promise<Page> {
  const records: RecordSummary[] = [];
  const budget = new ScanBudget(limits.budgetMs, limits.scanLimit);
  let scanned = 0;
  let next: number | null = null;
  let complete = true;
  let stopped: StopReason = null;
  let hasMore = false;
  for await (const record of source.read(dlq, query.from)) {
    stopped = budget.stopBefore(scanned);
    if (stopped !== null) {
      // One more record exists past where it stopped: the next request starts at it.
      complete = false;
      next = record.index;
      hasMore = true;
      break;
    }
    scanned += 1;
    const summary = select(record, query.filter);
    if (summary !== undefined) {
      if (records.length === query.limit) {
        hasMore = true;
        next = record.index;
        complete = false;
        break;
      }
      records.push(clipped(summary));
    }
  }
  return { mode: source.mode, records, depth, from: query.from, scanned, matched: records.length, complete, limited: stopped !== null, stopped, has_more: hasMore, next };
}

async function sorted(source: RecordSource, dlq: string, query: PageQuery, limits: PageLimits, depth: number | null): Promise<Page> {
  const keep = query.offset + query.limit;
  if (keep > limits.sortWindow) {
    throw new RangeError(`a sorted page reaches at most row ${limits.sortWindow}; narrow the filter or sort by queue position`);
  }
  const best: RecordSummary[] = [];
  const budget = new ScanBudget(limits.budgetMs, limits.scanLimit);
  let scanned = 0;
  let matched = 0;
  let stopped: StopReason = null;
  for await (const record of source.read(dlq, 0)) {
    stopped = budget.stopBefore(scanned);
    if (stopped !== null) break;
    scanned += 1;
    const summary = select(record, query.filter);
    if (summary !== undefined) {
      matched += 1;
      insert(best, clipped(summary), keep, (a, b) => compare(query.sort, a, b));
    }
  }
  return {
    mode: source.mode,
    records: best.slice(query.offset, keep),
    depth,
    from: 0,
    scanned,
    matched,
    complete: stopped === null,
    limited: stopped !== null,
    stopped,
    has_more: matched > keep,
    next: null,
  };
}

/** Inserts `item` into the sorted array `rows`, keeping at most `keep` of them. */
function insert<T>(rows: T[], item: T, keep: number, order: (a: T, b: T) => number): void {
  if (rows.length === keep && order(item, rows[rows.length - 1] as T) >= 0) return;
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (order(rows[mid] as T, item) <= 0) low = mid + 1;
    else high = mid;
  }
  rows.splice(low, 0, item);
  if (rows.length > keep) rows.pop();
}
