import { randomBytes } from 'node:crypto';
import type { RecordFilter } from './filter.js';
import { GroupTally, type FailureGroup } from './groups.js';
import { FailedAtTally, type FailedAtHistogram } from './histogram.js';
import type { Described } from './records.js';
import { ScanBudget, type StopReason } from './scan-budget.js';
import { selectFields } from './search.js';
import type { RecordSource } from './source.js';

/** Counts for the charts, over the records scanned so far. */
export interface DlqStats {
  readonly depth: number | null;
  /** Records counted so far: by this request and the earlier steps of its cursor. */
  readonly scanned: number;
  /** The counts cover the whole DLQ (the scan reached its end). */
  readonly complete: boolean;
  /** Why the last step stopped before the end (`time-budget`, `scan-limit`); null when complete. */
  readonly stopped: StopReason;
  /**
   * When not complete: the id to carry on with (`GET /api/stats?cursor=`),
   * which adds the next records to these counts. Null when complete.
   */
  readonly cursor: string | null;
  /** Where the next step reads from; null when complete. */
  readonly next: number | null;
  /** Records among those scanned that pass the filter. */
  readonly matched: number;
  /** Matching records by `dead_letter.reason` (`none` without a block). */
  readonly by_reason: Record<string, number>;
  /** Matching records by URN (`(none)` without one), the 12 largest, the rest as `(other)`. */
  readonly by_urn: Record<string, number>;
  /** Matching records by producing language → dead-lettering language (`node → php`). */
  readonly by_lang: Record<string, number>;
  readonly oldest_failed_at: number | null;
  readonly newest_failed_at: number | null;
  /** Matching records by `failed_at`. */
  readonly failed_at: FailedAtHistogram;
  /** The largest failure groups among the matching records (groups.ts), largest first. */
  readonly groups: FailureGroup[];
  /** Distinct failure groups seen. */
  readonly group_count: number;
  /** Matching records past the most groups one scan keeps (not in any group). */
  readonly ungrouped: number;
}

/** Groups a stats answer lists. */
export const GROUPS_SHOWN = 100;

const TOP_URNS = 12;
/** Distinct URNs counted one by one at most; the records of any further URN count as `(other)`. */
const MAX_URNS = 2000;

/**
 * The counters of one chart scan: bounded whatever the DLQ holds (at most
 * 2,000 groups, 2,000 URNs, 120 histogram buckets), never the records.
 */
class StatsTally {
  scanned = 0;
  matched = 0;
  readonly byReason: Record<string, number> = {};
  readonly byUrn = new Map<string, number>();
  otherUrns = 0;
  readonly byLang: Record<string, number> = {};
  oldest: number | null = null;
  newest: number | null = null;
  readonly histogram = new FailedAtTally();
  readonly groups = new GroupTally();

  add(fields: Described): void {
    this.matched += 1;
    this.groups.add(fields);
    bump(this.byReason, fields.kind === 'no-dead-letter' || fields.kind === 'not-json' ? 'none' : fields.reason || 'none');
    const urn = fields.urn ?? '(none)';
    const count = this.byUrn.get(urn);
    if (count !== undefined) this.byUrn.set(urn, count + 1);
    else if (this.byUrn.size < MAX_URNS) this.byUrn.set(urn, 1);
    else this.otherUrns += 1;
    bump(this.byLang, `${fields.lang ?? '?'} → ${fields.dead_letter_lang ?? '?'}`);
    if (fields.failed_at !== null) {
      this.histogram.add(fields.failed_at);
      this.oldest = this.oldest === null ? fields.failed_at : Math.min(this.oldest, fields.failed_at);
      this.newest = this.newest === null ? fields.failed_at : Math.max(this.newest, fields.failed_at);
    }
  }

  topUrns(): Record<string, number> {
    const sorted = [...this.byUrn].sort((a, b) => b[1] - a[1]);
    const out: Record<string, number> = Object.fromEntries(sorted.slice(0, TOP_URNS));
    const rest = sorted.slice(TOP_URNS).reduce((sum, [, n]) => sum + n, this.otherUrns);
    if (rest > 0) out['(other)'] = rest;
    return out;
  }
}

function bump(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

/** A chart scan left to carry on: its filter, where it stopped and its counters. */
interface OpenScan {
  readonly dlq: string;
  readonly filter: RecordFilter;
  readonly tally: StatsTally;
  next: number;
  touched: number;
}

/** A cursor that is unknown or expired: the page starts the charts over. */
export class ExpiredCursorError extends Error {
  override readonly name = 'ExpiredCursorError';
}

/**
 * Chart scans in progress, so the charts of a big DLQ are built over several
 * short requests: each step reads for its time budget, answers the counts so
 * far with a cursor, and the next step adds to them. Only counters are kept
 * (see {@link StatsTally}), for at most {@link StatsScans.KEPT} scans, each
 * dropped {@link StatsScans.IDLE_MS} after its last step.
 */
export class StatsScans {
  static readonly KEPT = 16;
  static readonly IDLE_MS = 120_000;
  private readonly open = new Map<string, OpenScan>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * One step: a new scan of `dlq` from the head with `filter`, or, with
   * `cursor`, the next step of that scan (its own DLQ and filter).
   */
  async step(source: RecordSource, dlq: string, filter: RecordFilter, cursor: string | undefined, budget: ScanBudget): Promise<DlqStats> {
    this.expire();
    let scan: OpenScan;
    if (cursor === undefined) {
      scan = { dlq, filter, tally: new StatsTally(), next: 0, touched: this.now() };
    } else {
      const found = this.open.get(cursor);
      if (found === undefined || found.dlq !== dlq) throw new ExpiredCursorError(`no chart scan "${cursor}" on ${dlq} (it ended, or expired after ${StatsScans.IDLE_MS / 1000} s without a step): start the charts again without a cursor`);
      this.open.delete(cursor);
      scan = found;
    }
    const depth = await source.depth(dlq);
    let stopped: StopReason = null;
    if (source.mode !== 'none') {
      let read = 0;
      for await (const record of source.read(dlq, scan.next)) {
        stopped = budget.stopBefore(read);
        if (stopped !== null) {
          scan.next = record.index;
          break;
        }
        read += 1;
        scan.tally.scanned += 1;
        const fields = selectFields(record, scan.filter);
        if (fields !== undefined) scan.tally.add(fields);
      }
    }
    let id: string | null = null;
    if (stopped !== null) {
      id = cursor ?? randomBytes(9).toString('base64url');
      scan.touched = this.now();
      this.open.set(id, scan);
      // The oldest scans go first when too many are open (a page closed mid-scan never ends its own).
      for (const key of this.open.keys()) {
        if (this.open.size <= StatsScans.KEPT) break;
        this.open.delete(key);
      }
    }
    const { tally } = scan;
    return {
      depth, scanned: tally.scanned, complete: stopped === null, stopped, cursor: id, next: stopped === null ? null : scan.next,
      matched: tally.matched, by_reason: tally.byReason, by_urn: tally.topUrns(), by_lang: tally.byLang,
      oldest_failed_at: tally.oldest, newest_failed_at: tally.newest, failed_at: tally.histogram.result(),
      groups: tally.groups.top(GROUPS_SHOWN), group_count: tally.groups.size, ungrouped: tally.groups.ungrouped,
    };
  }

  /** Open scans (for tests and the bench: memory stays bounded). */
  get size(): number {
    return this.open.size;
  }

  private expire(): void {
    const now = this.now();
    for (const [key, scan] of this.open) if (now - scan.touched > StatsScans.IDLE_MS) this.open.delete(key);
  }
}
