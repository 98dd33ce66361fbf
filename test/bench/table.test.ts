// `npm run bench` reads every bench's JSON into one table: the Report shape
// (bench/support/report.ts). No broker: the JSON is made here.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measurementsOf, table } from '../../bench/run.js';
import { LATENCY_ROUNDS, latencyRounds } from '../../bench/support/latency.js';
import type { Latency, Sample } from '../../bench/support/measure.js';
import { isLatency, latencyMeasurement, throughputMeasurement, throughputOf, type Report, type ThroughputMeasurement } from '../../bench/support/report.js';
import { alternate, inTurn, Rounds } from '../../bench/support/rounds.js';

const sample = (msgsPerSec: number, cpuUsPerMsg: number): Sample => ({ msgsPerSec, cpuUsPerMsg });
const latency = (p50Ms: number): Latency => ({ p50Ms, p99Ms: p50Ms * 2, p999Ms: p50Ms * 3, maxMs: p50Ms * 4, samples: 100, unhandled: 0 });
const tableOf = (result: unknown) => table('x', { status: 'ok', seconds: 1, loadBefore: [1, 1, 1], measurements: measurementsOf(result), result });
const throughputRows = (result: unknown) => measurementsOf(result).filter((m): m is ThroughputMeasurement => !isLatency(m));

describe('bench rounds and report', () => {
  it('alternate: every side once per round, the first side turning round by round', async () => {
    const order: string[] = [];
    const side = (name: string) => async () => void order.push(name);
    await alternate(3, [side('raw'), side('app')]);
    assert.deepEqual(order, ['raw', 'app', 'app', 'raw', 'raw', 'app']);
  });

  it('inTurn: one round of three sides starts with side round mod 3, so none always goes first', async () => {
    const order: string[] = [];
    const side = (name: string) => async () => void order.push(name);
    for (let r = 0; r < 3; r++) await inTurn(r, [side('app'), side('raw'), side('bullmq')]);
    assert.deepEqual(order, ['app', 'raw', 'bullmq', 'raw', 'bullmq', 'app', 'bullmq', 'app', 'raw']);
  });

  it('a Report: medians over the rounds, the slowest and fastest round, the ratios, read as they are', () => {
    const rounds = new Rounds();
    [sample(100, 10), sample(300, 30), sample(200, 20)].forEach((s) => rounds.add('publish', 'raw', s));
    [sample(150, 40), sample(50, 60), sample(100, 50)].forEach((s) => rounds.add('publish', 'app', s));
    const report: Report = { bench: 'x', params: { messages: 3 }, measurements: rounds.measurements(), node: 'v20' };
    const [row, ...rest] = throughputRows(JSON.parse(JSON.stringify(report)));
    assert.equal(rest.length, 0, 'one measurement');
    assert.deepEqual(row!.raw, { rate: 200, cpuUs: 20, rateMin: 100, rateMax: 300 });
    assert.deepEqual(row!.app, { rate: 100, cpuUs: 50, rateMin: 50, rateMax: 150 });
    assert.equal(row!.appToRaw, 0.5);
    assert.equal(row!.cpuRawToApp, 0.4);
    assert.match(tableOf(report), /\| publish \| 200 \| 100 \| 0\.50 \| 20\.0 \| 50\.0 \| 0\.40 \|/);
  });

  it('a Report with a BullMQ side: its rate and App / BullMQ in the table', () => {
    const measurement = throughputMeasurement('consume zset c=16', {
      app: throughputOf([sample(900, 30)]),
      raw: throughputOf([sample(1000, 27)]),
      bullmq: throughputOf([sample(300, 90)]),
    });
    const report: Report = { bench: 'redis', params: { messages: 1 }, measurements: [measurement], node: 'v20' };
    const [row] = throughputRows(JSON.parse(JSON.stringify(report)));
    assert.equal(row!.appToBullmq, 3);
    assert.match(tableOf(report), /\| consume zset c=16 \| 1,000 \| 900 \| 0\.90 \| 27\.0 \| 30\.0 \| 0\.90 \| 300 \| 3\.00 \|/);
  });

  it('latencyRounds: LATENCY_ROUNDS alternating rounds counted, after one uncounted round of each side when the process is cold', async () => {
    assert.equal(LATENCY_ROUNDS, 5, 'five rounds a side: no single slow round decides the median');
    for (const warmUp of [false, true]) {
      const order: string[] = [];
      let n = 0;
      const side = (name: string) => async () => {
        order.push(name);
        return latency(++n);
      };
      const runs = await latencyRounds(side('raw'), side('app'), warmUp);
      const counted = ['raw', 'app', 'app', 'raw', 'raw', 'app', 'app', 'raw', 'raw', 'app'];
      assert.deepEqual(order, [...(warmUp ? ['raw', 'app'] : []), ...counted]);
      const first = warmUp ? 3 : 1;
      const numbers = (name: string) => counted.flatMap((each, i) => (each === name ? [first + i] : []));
      assert.deepEqual(runs.raw.map((x) => x.p50Ms), numbers('raw'), 'raw: its counted rounds only');
      assert.deepEqual(runs.app.map((x) => x.p50Ms), numbers('app'), 'app: its counted rounds only');
    }
  });

  it('a measurement without both sides fails the bench rather than printing half a row', () => {
    const rounds = new Rounds();
    rounds.add('consume', 'app', sample(1, 1));
    assert.throws(() => rounds.measurements(), /consume: no raw round/);
  });
});

describe('bench JSON in the table', () => {
  it('a latency measurement: the median of each percentile per side, as a latency line', () => {
    const measurement = latencyMeasurement('latency', 1000, { app: [latency(4), latency(6), latency(5)], raw: [latency(2)] });
    const report: Report = { bench: 'rabbitmq', params: { messages: 1 }, measurements: [measurement], node: 'v20' };
    const [line, ...rest] = measurementsOf(JSON.parse(JSON.stringify(report)));
    assert.equal(rest.length, 0, 'one measurement');
    assert.ok(line !== undefined && isLatency(line), 'read back as a latency measurement');
    assert.deepEqual(line.app.latency, { p50Ms: 5, p99Ms: 10, p999Ms: 15, unhandled: 0 });
    const text = tableOf(report);
    assert.match(text, /\| latency \| 1,000 \| 2\.0 \/ 4\.0 \/ 6\.0 \| 5\.0 \/ 10\.0 \/ 15\.0 \|/);
    assert.match(text, /no msgs\/s rows/);
  });

  it('a bench with throughput rows and a latency line per layout (redis): every line under the msgs/s rows, unhandled messages said', () => {
    const throughput = throughputMeasurement('consume legacy c=16', { app: throughputOf([sample(900, 30)]), raw: throughputOf([sample(1000, 27)]) });
    const legacy = latencyMeasurement('latency legacy c=16', 1000, { app: [latency(50)], raw: [latency(1)] });
    const zset = latencyMeasurement('latency zset c=16', 1000, { app: [{ ...latency(2), unhandled: 3 }], raw: [latency(3)] });
    const report: Report = { bench: 'redis', params: { messages: 1 }, measurements: [throughput, legacy, zset], node: 'v20' };
    const text = tableOf(JSON.parse(JSON.stringify(report)));
    assert.match(text, /\| consume legacy c=16 \| 1,000 \| 900 \|/);
    assert.match(text, /\| latency legacy c=16 \| 1,000 \| 1\.0 \/ 2\.0 \/ 3\.0 \| 50\.0 \/ 100\.0 \/ 150\.0 \|/);
    assert.match(text, /\| latency zset c=16 \| 1,000 \| 3\.0 \/ 6\.0 \/ 9\.0 \| 2\.0 \/ 4\.0 \/ 6\.0 \(3 not handled in time\) \|/);
    assert.ok(text.indexOf('| latency legacy') > text.indexOf('| consume legacy'), 'the latency lines follow the msgs/s rows');
    assert.doesNotMatch(text, /no msgs\/s rows/);
  });

  it('JSON that is not a Report (codec) gives no rows and says so', () => {
    assert.deepEqual(measurementsOf({ bench: 'codec', small: { opsPerCpuSec: 1 } }), []);
    assert.match(tableOf({ bench: 'codec' }), /no msgs\/s rows/);
  });

  it('a Report with tables of its own (scale) prints them, without the no-rows line', () => {
    const report: Report = { bench: 'scale', params: {}, measurements: [], tables: ['| broker | W=1 c=1 |\n| --- | ---: |\n| redis-zset | 1,000 · 50 µs |'], node: 'v20' };
    const text = tableOf(JSON.parse(JSON.stringify(report)));
    assert.match(text, /\| redis-zset \| 1,000 · 50 µs \|/);
    assert.doesNotMatch(text, /no msgs\/s rows/);
  });
});
