/**
 * The one JSON shape a bench prints on stdout, which `npm run bench`
 * (bench/run.ts) reads into its table:
 *
 *   {
 *     "bench": "sqs",
 *     "params": { "messages": 5000, "window": 50, "rounds": 3 },
 *     "measurements": [
 *       { "mode": "publish",
 *         "app": { "rate": 2104, "cpuUs": 144.5, "rateMin": 1890, "rateMax": 2311 },
 *         "raw": { "rate": 2537, "cpuUs": 116.5, "rateMin": 2210, "rateMax": 2790 },
 *         "appToRaw": 0.83, "cpuRawToApp": 0.81,
 *         "rounds": { "app": [{ "msgsPerSec": …, "cpuUsPerMsg": … }, …], "raw": [ … ] } },
 *       { "mode": "latency", "offeredPerSec": 1000,
 *         "app": { "latency": { "p50Ms": 3.9, "p99Ms": 68.7, "p999Ms": 84.1, "unhandled": 0 } },
 *         "raw": { "latency": { … } } }
 *     ],
 *     "reference": { … },
 *     "node": "v20.20.0"
 *   }
 *
 * A throughput measurement gives, per side (`app`: through the BabelQueue App;
 * `raw`: the broker's client doing the same work, or what the mode names, as in
 * the runtime bench's `consume (raw: the bare loop)`; `bullmq` where the bench
 * has it), the median over the rounds of messages/s (`rate`) and of this process's
 * CPU time (user + system) per message in µs (`cpuUs`), with the slowest and
 * fastest round's rate; `cpuRawToApp` is the throughput ratio the CPU cost
 * alone predicts, steadier than `appToRaw` on a busy machine. A latency
 * measurement gives each side's publish → handler percentiles at a fixed
 * offered rate, medians over the rounds. `reference` holds figures that are not
 * one side's medians (e.g. another SDK's; the runtime bench's round-by-round
 * CPU differences).
 */
import { median, medianLatency, round, type Latency, type Sample } from './measure.js';

/** One side of a throughput measurement: medians over the rounds. */
export interface Throughput {
  /** Messages/s. */
  rate: number;
  /** This process's CPU time per message (user + system), µs. */
  cpuUs: number;
  /** The slowest and the fastest round's rate: how far the machine's noise swung. */
  rateMin?: number;
  rateMax?: number;
}

/** Publish → handler latency of one side, ms. */
export interface LatencyFigures {
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** Messages not handled before the bench's deadline (left out of the percentiles). */
  unhandled?: number;
}

export interface ThroughputMeasurement {
  mode: string;
  app: Throughput;
  raw: Throughput;
  bullmq?: Throughput;
  appToRaw: number;
  cpuRawToApp: number;
  appToBullmq?: number;
  /** Every round of every side. */
  rounds?: { app: Sample[]; raw: Sample[]; bullmq?: Sample[] };
}

export interface LatencyMeasurement {
  mode: string;
  offeredPerSec: number;
  app: { latency: LatencyFigures };
  raw: { latency: LatencyFigures };
  /** Every round of every side. */
  rounds?: { app: Latency[]; raw: Latency[] };
}

export type Measurement = ThroughputMeasurement | LatencyMeasurement;

export interface Report {
  bench: string;
  /** What the bench was run with (messages, window, rounds, …). */
  params: Record<string, string | number>;
  measurements: Measurement[];
  /** Figures that are not one side's medians (e.g. another SDK's, on fewer messages; CPU differences taken round by round). */
  reference?: Record<string, unknown>;
  /** Markdown tables a bench renders itself, printed after the msgs/s rows (the scaling bench's, whose cells have no raw side). */
  tables?: string[];
  node: string;
}

/** One side's medians over its rounds. */
export function throughputOf(samples: Sample[]): Throughput {
  const rates = samples.map((s) => s.msgsPerSec);
  return {
    rate: Math.round(median(rates)),
    cpuUs: round(median(samples.map((s) => s.cpuUsPerMsg)), 2),
    rateMin: Math.min(...rates),
    rateMax: Math.max(...rates),
  };
}

/** A throughput measurement from each side's figures, with the ratios. */
export function throughputMeasurement(
  mode: string,
  sides: { app: Throughput; raw: Throughput; bullmq?: Throughput },
  rounds?: ThroughputMeasurement['rounds'],
): ThroughputMeasurement {
  const { app, raw, bullmq } = sides;
  return {
    mode,
    app,
    raw,
    ...(bullmq !== undefined ? { bullmq } : {}),
    appToRaw: round(app.rate / raw.rate, 3),
    cpuRawToApp: round(raw.cpuUs / app.cpuUs, 3),
    ...(bullmq !== undefined ? { appToBullmq: round(app.rate / bullmq.rate, 3) } : {}),
    ...(rounds !== undefined ? { rounds } : {}),
  };
}

/** A latency measurement: the median of each percentile over each side's rounds. */
export function latencyMeasurement(mode: string, offeredPerSec: number, rounds: { app: Latency[]; raw: Latency[] }): LatencyMeasurement {
  return { mode, offeredPerSec, app: { latency: medianLatency(rounds.app) }, raw: { latency: medianLatency(rounds.raw) }, rounds };
}

export const isLatency = (m: Measurement): m is LatencyMeasurement => 'latency' in m.app;

/** True when a bench's JSON is a {@link Report} (codec's is not: it has no App-beside-raw figures). */
export function isReport(result: unknown): result is Report {
  return typeof result === 'object' && result !== null && Array.isArray((result as Partial<Report>).measurements);
}

/** Prints the report as the bench's output: one JSON document on stdout. */
export function printReport(report: Omit<Report, 'node'>): void {
  console.log(JSON.stringify({ ...report, node: process.version }, null, 2));
}
