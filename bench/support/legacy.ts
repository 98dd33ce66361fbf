/**
 * Reads the JSON of the benches that do not print a Report (report.ts) yet
 * (rabbitmq through measure.ts's `compare`, and runtime) into measurements,
 * so that `npm run bench` tables every bench alike. Delete it once the last
 * of them prints a Report.
 */
import { throughputMeasurement, type LatencyFigures, type Measurement, type Throughput } from './report.js';

type Json = Record<string, unknown>;

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
const obj = (x: unknown) => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Json) : undefined);

/** `{ rate, cpuUs }` when both are numbers. */
function throughput(rate: unknown, cpuUs: unknown): Throughput | undefined {
  const r = num(rate);
  const c = num(cpuUs);
  return r === undefined || c === undefined ? undefined : { rate: r, cpuUs: c };
}

/** rabbitmq: one `compare()` object per mode at the top, and `latency` from `compareLatency()`. */
function fromCompare(result: Json): Measurement[] {
  const out: Measurement[] = [];
  for (const [mode, value] of Object.entries(result)) {
    const o = obj(value);
    if (o === undefined) continue;
    const app = throughput(o.appMsgsPerSec, o.appCpuUsPerMsg);
    const raw = throughput(o.rawMsgsPerSec, o.rawCpuUsPerMsg);
    if (app !== undefined && raw !== undefined) out.push(throughputMeasurement(mode, { app, raw }));
    const offeredPerSec = num(o.offeredPerSec);
    if (offeredPerSec !== undefined && obj(o.app) !== undefined && obj(o.raw) !== undefined) {
      out.push({ mode, offeredPerSec, app: { latency: o.app as unknown as LatencyFigures }, raw: { latency: o.raw as unknown as LatencyFigures } });
    }
  }
  return out;
}

/** runtime: the App beside the bare loop, `appMsgsPerSec`/`bareMsgsPerSec` and `cpuMicrosPerMsg: { app, bare }`. */
function fromRuntime(result: Json): Measurement[] {
  const cpu = obj(result.cpuMicrosPerMsg) ?? {};
  const app = throughput(result.appMsgsPerSec, cpu.app);
  const raw = throughput(result.bareMsgsPerSec, cpu.bare);
  return app !== undefined && raw !== undefined ? [throughputMeasurement('consume (raw: the bare loop)', { app, raw })] : [];
}

/** The measurements in a bench's JSON of a shape before Report's (none found: an empty list). */
export function legacyMeasurements(result: unknown): Measurement[] {
  const o = obj(result);
  if (o === undefined) return [];
  if (num(o.bareMsgsPerSec) !== undefined) return fromRuntime(o);
  return fromCompare(o);
}
