import type { RecordFilter } from './filter.js';
import { GroupTally, type FailureGroup } from './groups.js';
import { FailedAtTally, type FailedAtHistogram } from './histogram.js';
import { select } from './search.js';
import type { RecordSource } from './source.js';

/** Counts for the charts, over the first `scanLimit` records. */
export interface DlqStats {
  readonly depth: number | null;
  readonly scanned: number;
  readonly complete: boolean;
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

/** Streams the DLQ once (bounded) and counts what matches `filter`: by reason, URN, language, `failed_at` and failure group. Only the counters are kept. */
export async function readStats(source: RecordSource, dlq: string, filter: RecordFilter, scanLimit: number): Promise<DlqStats> {
  const depth = await source.depth(dlq);
  const byReason: Record<string, number> = {};
  const byUrn = new Map<string, number>();
  const byLang: Record<string, number> = {};
  let scanned = 0;
  let matched = 0;
  let complete = true;
  let oldest: number | null = null;
  let newest: number | null = null;
  const histogram = new FailedAtTally();
  const groups = new GroupTally();
  const bump = (into: Record<string, number>, key: string) => (into[key] = (into[key] ?? 0) + 1);
  if (source.mode !== 'none') {
    for await (const record of source.read(dlq, 0)) {
      if (scanned >= scanLimit) {
        complete = false;
        break;
      }
      scanned += 1;
      const summary = select(record, filter);
      if (summary !== undefined) {
        matched += 1;
        groups.add(summary);
        bump(byReason, summary.kind === 'no-dead-letter' || summary.kind === 'not-json' ? 'none' : summary.reason || 'none');
        const urn = summary.urn ?? '(none)';
        byUrn.set(urn, (byUrn.get(urn) ?? 0) + 1);
        bump(byLang, `${summary.lang ?? '?'} → ${summary.dead_letter_lang ?? '?'}`);
        if (summary.failed_at !== null) {
          histogram.add(summary.failed_at);
          oldest = oldest === null ? summary.failed_at : Math.min(oldest, summary.failed_at);
          newest = newest === null ? summary.failed_at : Math.max(newest, summary.failed_at);
        }
      }
    }
  }
  return {
    depth, scanned, complete, matched, by_reason: byReason, by_urn: topOf(byUrn), by_lang: byLang, oldest_failed_at: oldest, newest_failed_at: newest,
    failed_at: histogram.result(), groups: groups.top(GROUPS_SHOWN), group_count: groups.size, ungrouped: groups.ungrouped,
  };
}

function topOf(counts: Map<string, number>): Record<string, number> {
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const out: Record<string, number> = Object.fromEntries(sorted.slice(0, TOP_URNS));
  const rest = sorted.slice(TOP_URNS).reduce((sum, [, n]) => sum + n, 0);
  if (rest > 0) out['(other)'] = rest;
  return out;
}
