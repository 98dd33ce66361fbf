/** One depth sample. */
export interface DepthSample {
  /** ms UTC. */
  readonly t: number;
  readonly depth: number;
}

/**
 * The depth of each DLQ over time, sampled while the console runs (brokers
 * keep no history of it), in a ring of the last `keep` samples per DLQ.
 */
export class DepthHistory {
  private readonly samples = new Map<string, DepthSample[]>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dlqs: readonly string[],
    private readonly measure: (dlq: string) => Promise<number | null>,
    private readonly keep: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Samples every DLQ now, then every `everyMs`. A failed sample is skipped, not fatal. */
  start(everyMs: number): void {
    void this.sampleAll();
    this.timer = setInterval(() => void this.sampleAll(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Samples every DLQ once (after an action, so the chart shows its effect). */
  async sampleAll(): Promise<void> {
    await Promise.all(this.dlqs.map((dlq) => this.sample(dlq)));
  }

  /** Records a depth measured elsewhere (a page read). */
  record(dlq: string, depth: number | null): void {
    if (depth === null) return;
    const ring = this.samples.get(dlq) ?? [];
    ring.push({ t: this.now(), depth });
    if (ring.length > this.keep) ring.splice(0, ring.length - this.keep);
    this.samples.set(dlq, ring);
  }

  of(dlq: string): readonly DepthSample[] {
    return this.samples.get(dlq) ?? [];
  }

  private async sample(dlq: string): Promise<void> {
    try {
      this.record(dlq, await this.measure(dlq));
    } catch {
      // The broker is away: a gap in the chart, and the page shows the error on its next read.
    }
  }
}
