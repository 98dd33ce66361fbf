/** Bucket widths a `failed_at` histogram may use, finest first (ms). */
const WIDTHS = [1_000, 5_000, 15_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000, 2_592_000_000, 31_536_000_000] as const;

/** Buckets a histogram keeps at most: past that it coarsens to the next width. */
export const MAX_BUCKETS = 120;

/** A `failed_at` histogram: counts per bucket of `width` ms, each bucket named by its start (ms UTC). */
export interface FailedAtHistogram {
  readonly width_ms: number;
  readonly buckets: readonly { readonly t: number; readonly count: number }[];
}

/**
 * A histogram built while a scan streams, whose range is not known before the
 * scan ends: it starts at one-second buckets and, whenever it would hold more
 * than {@link MAX_BUCKETS}, merges them into the next coarser width. Memory is
 * bounded by the bucket count, never by the number of records.
 */
export class FailedAtTally {
  private level = 0;
  private counts = new Map<number, number>();

  add(failedAt: number): void {
    const start = this.bucketOf(failedAt);
    this.counts.set(start, (this.counts.get(start) ?? 0) + 1);
    while (this.counts.size > MAX_BUCKETS && this.level < WIDTHS.length - 1) this.coarsen();
  }

  result(): FailedAtHistogram {
    return { width_ms: WIDTHS[this.level] as number, buckets: [...this.counts].sort((a, b) => a[0] - b[0]).map(([t, count]) => ({ t, count })) };
  }

  private bucketOf(t: number): number {
    const width = WIDTHS[this.level] as number;
    return Math.floor(t / width) * width;
  }

  private coarsen(): void {
    this.level += 1;
    const merged = new Map<number, number>();
    for (const [t, count] of this.counts) {
      const start = this.bucketOf(t);
      merged.set(start, (merged.get(start) ?? 0) + count);
    }
    this.counts = merged;
  }
}
