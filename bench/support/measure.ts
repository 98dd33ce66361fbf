/**
 * What the broker benches share: a timed run (messages/s and this process's
 * CPU per message), medians over rounds, and publish → handler latency at a
 * fixed offered rate.
 */

/** One timed run. */
export interface Sample {
  msgsPerSec: number;
  /** CPU time of this process per message (user + system), in µs: steadier than wall time on a busy machine. */
  cpuUsPerMsg: number;
}

/** Times `run`, which moves `count` messages. */
export async function timed(count: number, run: () => Promise<unknown>): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { msgsPerSec: Math.round(count / seconds), cpuUsPerMsg: round((used.user + used.system) / count, 2) };
}

/** A stopwatch started by the first message and stopped by the last (so a group join or a subscribe is not counted). */
export class Span {
  private start = 0;
  private cpu: NodeJS.CpuUsage | undefined;
  private sample: Sample | undefined;
  private seen = 0;

  constructor(private readonly count: number) {}

  /** Call once per message handled. */
  tick(): void {
    this.seen += 1;
    if (this.seen === 1) {
      this.cpu = process.cpuUsage();
      this.start = performance.now();
    } else if (this.seen === this.count) {
      const used = process.cpuUsage(this.cpu);
      const seconds = (performance.now() - this.start) / 1000;
      // The first message started the clock: count-1 messages in the span.
      this.sample = { msgsPerSec: Math.round((this.count - 1) / seconds), cpuUsPerMsg: round((used.user + used.system) / (this.count - 1), 2) };
    }
  }

  get result(): Sample {
    if (this.sample === undefined) throw new Error(`only ${this.seen} of ${this.count} messages were seen`);
    return this.sample;
  }
}

/** The median of `xs` (the mean of the middle two when their count is even). */
export const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Latency percentiles in milliseconds. */
export interface Latency {
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  samples: number;
  /** Offered after the warm-up but not handled before the deadline (the percentiles leave them out). */
  unhandled: number;
}

/**
 * Publish → handler latency at a fixed offered rate. Message `i` is due at
 * start + i / rate; `send(i)` is called at its due time (not after the previous
 * send finished) and latency is measured from the due time, so a stalled
 * publisher counts against the result instead of hiding it. Before the clock
 * starts, probes (i = -1) are sent every 100 ms until one is handled, so a
 * consumer still joining its group is not measured. The first tenth is warm-up.
 */
export class OfferedLoad {
  private readonly due: Float64Array;
  private readonly latency: Float64Array;
  private handled = 0;
  private probed = false;
  private done!: () => void;
  private readonly finished = new Promise<void>((resolve) => (this.done = resolve));

  constructor(
    readonly perSec: number,
    readonly count: number,
  ) {
    this.due = new Float64Array(count);
    this.latency = new Float64Array(count);
  }

  /** Call from the handler with the message's index (-1 for a probe). */
  seen(i: number): void {
    if (i < 0) {
      this.probed = true;
      return;
    }
    this.latency[i] = performance.now() - this.due[i]!;
    if (++this.handled === this.count) this.done();
  }

  /** Probes until the consumer answers, offers every message at its due time, waits until all were handled (bounded). */
  async run(send: (i: number) => Promise<unknown> | void, timeoutMs = 30_000 + (3000 * this.count) / this.perSec): Promise<Latency> {
    const sends: Promise<unknown>[] = [];
    const deadline = Date.now() + timeoutMs;
    while (!this.probed) {
      if (Date.now() > deadline) throw new Error('the consumer never answered a probe');
      sends.push(Promise.resolve(send(-1)));
      await sleep(100);
    }
    const start = performance.now();
    const interval = 1000 / this.perSec;
    for (let i = 0; i < this.count; ) {
      const now = performance.now();
      for (; i < this.count && start + i * interval <= now; i++) {
        this.due[i] = start + i * interval;
        sends.push(Promise.resolve(send(i)));
      }
      if (i < this.count) await sleep(Math.max(0, start + i * interval - performance.now()));
    }
    // Past the deadline, what was not handled is reported (`unhandled`) rather than waited for.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.finished, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
    clearTimeout(timer);
    await Promise.race([Promise.allSettled(sends), sleep(1000)]);
    const from = Math.floor(this.count / 10);
    const measured = Array.from(this.latency.subarray(from)).filter((x) => x > 0).sort((a, b) => a - b);
    if (measured.length === 0) throw new Error(`none of ${this.count} messages was handled in time`);
    const at = (q: number) => round(measured[Math.min(measured.length - 1, Math.floor(q * measured.length))]!, 2);
    return {
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      p999Ms: at(0.999),
      maxMs: round(measured[measured.length - 1]!, 2),
      samples: measured.length,
      unhandled: this.count - from - measured.length,
    };
  }
}

/** One side's latency over its rounds: the median of each percentile, the most left unhandled. */
export function medianLatency(xs: Latency[]) {
  return {
    p50Ms: round(median(xs.map((x) => x.p50Ms)), 2),
    p99Ms: round(median(xs.map((x) => x.p99Ms)), 2),
    p999Ms: round(median(xs.map((x) => x.p999Ms)), 2),
    unhandled: Math.max(...xs.map((x) => x.unhandled)),
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `x` rounded to `digits` decimals. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
