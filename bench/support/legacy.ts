/**
 * Reads the JSON of the benches that do not print a Report (report.ts) yet
 * (kafka and rabbitmq through measure.ts's `compare`, redis, runtime) into
 * measurements, so that `npm run bench` tables every bench alike. Delete it
 * once the last of them prints a Report.
 */
import { throughputMeasurement, type LatencyFigures, type Measurement, type Throughput } from './report.js';

type Json = Record<string, unknown>;

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
const obj = (x: unknown) => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Json) : undefined);

/** `{ rate, cpuUs }` when both are numbers (rateMin/rateMax kept). */
function throughput(x: unknown): Throughput | undefined {
  const o = obj(x);
  const rate = num(o?.rate);
  const cpuUs = num(o?.cpuUs);
  if (rate === undefined || cpuUs === undefined) return undefined;
  const rateMin = num(o?.rateMin);
  const rateMax = num(o?.rateMax);
  return { rate, cpuUs, ...(rateMin !== undefined ? { rateMin } : {}), ...(rateMax !== undefined ? { rateMax } : {}) };
}

/** kafka, rabbitmq: one `compare()` object per mode at the top, and `latency` from `compareLatency()`. */
function fromCompare(result: Json): Measurement[] {
  const out: Measurement[] = [];
  for (const [mode, value] of Object.entries(result)) {
    const o = obj(value);
    if (o === undefined) continue;
    const app = throughput({ rate: o.appMsgsPerSec, cpuUs: o.appCpuUsPerMsg });
    const raw = throughput({ rate: o.rawMsgsPerSec, cpuUs: o.rawCpuUsPerMsg });
    if (app !== undefined && raw !== undefined) out.push(throughputMeasurement(mode, { app, raw }));
    const offeredPerSec = num(o.offeredPerSec);
    if (offeredPerSec !== undefined && obj(o.app) !== undefined && obj(o.raw) !== undefined) {
      out.push({ mode, offeredPerSec, app: { latency: o.app as unknown as LatencyFigures }, raw: { latency: o.raw as unknown as LatencyFigures } });
    }
  }
  return out;
}

/** redis: `results: [{ mode, layout, concurrency, app, raw, bullmq }]`, each side `{ rate, cpuUs, rateMin, rateMax }`. */
function fromRedis(results: unknown[]): Measurement[] {
  return results.flatMap((element) => {
    const o = obj(element) ?? {};
    const app = throughput(o.app);
    const raw = throughput(o.raw);
    if (app === undefined || raw === undefined) return [];
    const bullmq = throughput(o.bullmq);
    const mode = [o.mode, o.layout, o.concurrency === undefined ? undefined : `c=${String(o.concurrency)}`].filter((x) => x !== undefined).join(' ');
    return [throughputMeasurement(mode, { app, raw, ...(bullmq !== undefined ? { bullmq } : {}) })];
  });
}

/** runtime: the App beside the bare loop, `appMsgsPerSec`/`bareMsgsPerSec` and `cpuMicrosPerMsg: { app, bare }`. */
function fromRuntime(result: Json): Measurement[] {
  const cpu = obj(result.cpuMicrosPerMsg) ?? {};
  const app = throughput({ rate: result.appMsgsPerSec, cpuUs: cpu.app });
  const raw = throughput({ rate: result.bareMsgsPerSec, cpuUs: cpu.bare });
  return app !== undefined && raw !== undefined ? [throughputMeasurement('consume (raw: the bare loop)', { app, raw })] : [];
}

/** The measurements in a bench's JSON of a shape before Report's (none found: an empty list). */
export function legacyMeasurements(result: unknown): Measurement[] {
  const o = obj(result);
  if (o === undefined) return [];
  if (Array.isArray(o.results)) return fromRedis(o.results);
  if (num(o.bareMsgsPerSec) !== undefined) return fromRuntime(o);
  return fromCompare(o);
}
