// `npm run bench` reads every bench's JSON into one table: the Report shape
// (bench/support/report.ts) and, until they move to it, the shapes the
// rabbitmq and runtime benches print. No broker: the JSON is made here.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measurementsOf, table } from '../../bench/run.js';
import { compare, compareLatency, type Latency, type Sample } from '../../bench/support/measure.js';
import { isLatency, throughputMeasurement, throughputOf, type Report, type ThroughputMeasurement } from '../../bench/support/report.js';
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

  it('a measurement without both sides fails the bench rather than printing half a row', () => {
    const rounds = new Rounds();
    rounds.add('consume', 'app', sample(1, 1));
    assert.throws(() => rounds.measurements(), /consume: no raw round/);
  });
});

describe('bench JSON of the shapes before the Report', () => {
  it('rabbitmq: compare() per mode and compareLatency(), as rows and a latency line', () => {
    const result = {
      bench: 'rabbitmq',
      rounds: 3,
      publishConfirmed: compare([sample(1000, 40)], [sample(800, 50)]),
      latency: compareLatency(1000, [latency(2)], [latency(4)]),
    };
    const [row] = throughputRows(result);
    assert.equal(row!.mode, 'publishConfirmed');
    assert.deepEqual([row!.raw.rate, row!.app.rate, row!.appToRaw, row!.cpuRawToApp], [1000, 800, 0.8, 0.8]);
    const text = tableOf(result);
    assert.match(text, /\| publishConfirmed \| 1,000 \| 800 \| 0\.80 \| 40\.0 \| 50\.0 \| 0\.80 \|/);
    assert.match(text, /\| latency \| 1,000 \| 2\.0 \/ 4\.0 \/ 6\.0 \| 4\.0 \/ 8\.0 \/ 12\.0 \|/);
  });

  it('runtime: the App beside the bare loop', () => {
    const result = { bench: 'runtime', bareMsgsPerSec: 100_000, appMsgsPerSec: 40_000, cpuMicrosPerMsg: { bare: 2, app: 5 } };
    const [row] = throughputRows(result);
    assert.deepEqual([row!.mode, row!.appToRaw, row!.cpuRawToApp], ['consume (raw: the bare loop)', 0.4, 0.4]);
  });

  it('JSON with no App-beside-raw figures (codec) gives no rows and says so', () => {
    assert.deepEqual(measurementsOf({ bench: 'codec', small: { opsPerCpuSec: 1 } }), []);
    assert.match(tableOf({ bench: 'codec' }), /no msgs\/s rows/);
  });
});
