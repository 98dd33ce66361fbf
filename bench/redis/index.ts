/**
 * Redis throughput through the App beside a raw ioredis loop doing the same
 * commands, and beside BullMQ, on the same Redis, in one run. JSON out.
 *
 *   BABELQUEUE_REDIS_URL=redis://127.0.0.1:6379 \
 *     node --conditions=source --import tsx bench/redis/index.ts [messages=10000] [rounds=5] [modes=publish,consume,publishMany,latency] [rate=1000]
 *
 * For each layout (legacy, zset) and concurrency (1, 16):
 * - publish: `concurrency` publishers in flight. App: app.publish (makes and
 *   encodes the envelope too). Raw: the same commands on one connection
 *   (legacy RPUSH; zset RPUSH + RPUSH :notify in one pipeline) of a
 *   pre-encoded envelope.
 * - consume: N envelopes pre-filled, then drained with a no-op handler and at
 *   most `concurrency` in flight. App: app.consume (decode, validate, route,
 *   settle through the layout's Lua scripts). Raw: the reliable-queue loop
 *   (legacy: LMOVE ready→processing, JSON.parse, LREM; zset: Laravel's pop
 *   script, JSON.parse, ZREM :reserved) with `concurrency` workers on one
 *   connection.
 * - publishMany (per layout, mode `publishMany`): five times `messages` per
 *   run (a run of `messages` lasts about 0.1 s), in batches of 100, one after
 *   the other. App: app.publishMany of the batch. Raw: the same writes of
 *   pre-encoded envelopes made in the loop (legacy one RPUSH of the batch;
 *   zset RPUSH of the batch + RPUSH :notify in one pipeline). BullMQ:
 *   Queue.addBulk of the batch.
 * - latency (per layout, mode `latency <layout> c=16`): publish → handler at
 *   `rate` messages/s (default 1,000), at most 16 in flight on the consume
 *   side; p50/p99/p99.9 from each message's due time (bench/support/latency.ts),
 *   five rounds after the others, no BullMQ side. Raw: the publish above on one
 *   connection; 16 workers, each on its own connection (a blocking command
 *   holds it) doing the reliable-queue loop above, but waiting on an empty
 *   queue the raw client's way (legacy BLMOVE instead of LMOVE; zset Laravel's
 *   block_for: BLPOP :notify, then the pop script again). App: app.publish and
 *   app.consume at concurrency 16, waiting as the layout does (legacy: a
 *   sleep-poll from 100 ms; zset: BLPOP on :notify).
 * BullMQ (same Redis, once per concurrency and round): Queue.add with the same window,
 * and a Worker with a no-op processor at that concurrency.
 * Every round runs each side of each measurement once, the side that goes
 * first (App, raw, BullMQ) turning from round to round, so a load swing on the
 * busy machine hits all alike. Prints a Report (bench/support/report.ts): the
 * median of the rounds with their min and max, and this process's CPU µs per
 * message (user + system; Redis's own CPU is not in it), which is steadier
 * than the rate.
 */
import { Redis } from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { createApp, EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { RedisTransport, type RedisLayout } from '@babelqueue/redis';
import { appLatency, indexOf, latencyRounds } from '../support/latency.js';
import { OfferedLoad, timed, type Latency, type Sample } from '../support/measure.js';
import { latencyMeasurement, printReport, throughputMeasurement, throughputOf, type Measurement } from '../support/report.js';
import { inTurn } from '../support/rounds.js';
import { benchQueue, DATA, URN, windowed } from '../support/workload.js';

const URL_ = process.env.BABELQUEUE_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MESSAGES = Number(process.argv[2] ?? 10_000);
/** Messages per run: a small warm-up first (JIT, connections, scripts loaded), then MESSAGES. */
let N = Math.min(2000, MESSAGES);
/**
 * Messages per publishMany run: five times MESSAGES, since a batched round of
 * MESSAGES lasts about 0.1 s, so one GC pause moved its ratio by a quarter.
 */
const MANY_MESSAGES = 5 * MESSAGES;
const ROUNDS = Number(process.argv[3] ?? 5);
const MODES = (process.argv[4] ?? 'publish,consume,publishMany,latency').split(',');
const RATE = Number(process.argv[5] ?? 1000);
const LATENCY_N = RATE * 4;
const LATENCY_C = 16;
const LAYOUTS: RedisLayout[] = ['legacy', 'zset'];
const CONCURRENCY = [1, 16];

// Laravel's pop, for the raw zset loop (no migration: nothing is delayed here).
const RAW_POP = `local job = redis.call('LPOP', KEYS[1])
if not job then return false end
local t = cjson.decode(job); t['attempts'] = t['attempts'] + 1
local reserved = cjson.encode(t)
redis.call('ZADD', KEYS[2], ARGV[1], reserved)
redis.call('LPOP', KEYS[3])
return {job, reserved}`;

const redis = new Redis(URL_);

/** A connection that runs the raw zset pop (Laravel's script) as `rawPopBuffer`. */
function popper() {
  const client = new Redis(URL_);
  client.defineCommand('rawPop', { numberOfKeys: 3, lua: RAW_POP });
  const pop = (client as unknown as { rawPopBuffer(...args: (string | number)[]): Promise<[Buffer, Buffer] | null> }).rawPopBuffer.bind(client);
  return { client, pop };
}

function bodies(queue: string): Buffer[] {
  return Array.from({ length: N }, (_, i) => Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { ...DATA, i }, { queue }))));
}

const readyKey = (layout: RedisLayout, q: string) => (layout === 'zset' ? `queues:${q}` : q);

async function fill(layout: RedisLayout, q: string): Promise<void> {
  const all = bodies(q);
  for (let i = 0; i < all.length; i += 1000) {
    const chunk = all.slice(i, i + 1000);
    const p = redis.pipeline().rpush(readyKey(layout, q), ...chunk);
    if (layout === 'zset') p.rpush(`queues:${q}:notify`, ...chunk.map(() => '1'));
    await p.exec();
  }
}

async function cleanup(q: string): Promise<void> {
  const keys = await redis.keys(`*${q}*`);
  if (keys.length > 0) await redis.del(...keys);
}

async function appPublish(layout: RedisLayout, c: number): Promise<Sample> {
  const q = benchQueue(`${layout}-apppub`);
  const transport = new RedisTransport({ url: URL_, layout, logger: silentLogger });
  const app = createApp({ transport, queue: q, logger: silentLogger });
  await transport.connect({ timeoutMs: 10_000 });
  const run = await timed(N, () => windowed(N, c, (i) => app.publish(URN, { ...DATA, i })));
  await app.close();
  await cleanup(q);
  return run;
}

async function rawPublish(layout: RedisLayout, c: number): Promise<Sample> {
  const q = benchQueue(`${layout}-rawpub`);
  const client = new Redis(URL_);
  await client.ping();
  const run = await timed(N, () => windowed(N, c, (i) => {
    const body = Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { ...DATA, i }, { queue: q })));
    return layout === 'zset'
      ? client.pipeline().rpush(`queues:${q}`, body).rpush(`queues:${q}:notify`, '1').exec()
      : client.rpush(q, body);
  }));
  await client.quit();
  await cleanup(q);
  return run;
}

async function appConsume(layout: RedisLayout, c: number): Promise<Sample> {
  const q = benchQueue(`${layout}-appcon`);
  await fill(layout, q);
  const transport = new RedisTransport({ url: URL_, layout, logger: silentLogger });
  const app = createApp({ transport, queue: q, logger: silentLogger });
  app.handle(URN, () => {});
  await transport.connect({ timeoutMs: 10_000 });
  const run = await timed(N, async () => {
    const handled = await app.consume({ concurrency: c, maxMessages: N, idleMs: 5000 });
    if (handled !== N) throw new Error(`app consumed ${handled} of ${N}`);
  });
  await app.close();
  await cleanup(q);
  return run;
}

async function rawConsume(layout: RedisLayout, c: number): Promise<Sample> {
  const q = benchQueue(`${layout}-rawcon`);
  await fill(layout, q);
  const { client, pop } = popper();
  await client.ping();
  let done = 0;
  const run = await timed(N, () => Promise.all(Array.from({ length: c }, async () => {
    for (;;) {
      if (layout === 'legacy') {
        const body = await client.lmoveBuffer(q, `${q}:processing`, 'LEFT', 'RIGHT');
        if (body === null) return;
        JSON.parse(body.toString());
        await client.lrem(`${q}:processing`, 1, body);
      } else {
        const reply = await pop(`queues:${q}`, `queues:${q}:reserved`, `queues:${q}:notify`, Math.floor(Date.now() / 1000) + 90);
        if (reply === null) return;
        JSON.parse(reply[0].toString());
        await client.zrem(`queues:${q}:reserved`, reply[1]);
      }
      done++;
    }
  })));
  if (done !== N) throw new Error(`raw consumed ${done} of ${N}`);
  await client.quit();
  await cleanup(q);
  return run;
}

async function bullPublish(c: number): Promise<Sample> {
  const name = benchQueue('bull-pub');
  const connection = new Redis(URL_, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  await queue.waitUntilReady();
  const run = await timed(N, () => windowed(N, c, (i) => queue.add('job', { ...DATA, i }, { removeOnComplete: true })));
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  return run;
}

async function bullConsume(c: number): Promise<Sample> {
  const name = benchQueue('bull-con');
  const connection = new Redis(URL_, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  for (let i = 0; i < N; i += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, N - i) }, (_, j) => ({ name: 'job', data: { ...DATA, i: i + j }, opts: { removeOnComplete: true } })));
  }
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const workerConnection = new Redis(URL_, { maxRetriesPerRequest: null });
  let worker!: Worker;
  const run = await timed(N, async () => {
    worker = new Worker(name, async () => {}, { connection: workerConnection, concurrency: c });
    worker.on('completed', () => {
      if (++done === N) finish();
    });
    await finished;
  });
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await Promise.all([connection.quit(), workerConnection.quit()]);
  return run;
}

const BATCH = 100;

/** Sends N messages in batches of BATCH through `send`, one batch after the other. */
async function batches(send: (from: number, count: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < N; i += BATCH) await send(i, Math.min(BATCH, N - i));
}

async function appPublishMany(layout: RedisLayout): Promise<Sample> {
  const q = benchQueue(`${layout}-appmany`);
  const app = createApp({ transport: new RedisTransport({ url: URL_, layout, logger: silentLogger }), queue: q, logger: silentLogger });
  await app.publish(URN, DATA); // connected before the clock starts, as the raw client is
  const run = await timed(N, () => batches((from, count) => app.publishMany(URN, Array.from({ length: count }, (_, k) => ({ ...DATA, i: from + k })))));
  await app.close();
  await cleanup(q);
  return run;
}

async function rawPublishMany(layout: RedisLayout): Promise<Sample> {
  const q = benchQueue(`${layout}-rawmany`);
  const client = new Redis(URL_);
  await client.ping();
  const run = await timed(N, () => batches((from, count) => {
    const batch = Array.from({ length: count }, (_, k) => Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { ...DATA, i: from + k }, { queue: q }))));
    return layout === 'zset'
      ? client.pipeline().rpush(`queues:${q}`, ...batch).rpush(`queues:${q}:notify`, ...batch.map(() => '1')).exec()
      : client.rpush(q, ...batch);
  }));
  await client.quit();
  await cleanup(q);
  return run;
}

async function bullAddBulk(): Promise<Sample> {
  const name = benchQueue('bull-bulk');
  const connection = new Redis(URL_, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  await queue.waitUntilReady();
  const run = await timed(N, () => batches((from, count) =>
    queue.addBulk(Array.from({ length: count }, (_, k) => ({ name: 'job', data: { ...DATA, i: from + k }, opts: { removeOnComplete: true } })))));
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  return run;
}

/** The raw side's latency: the publish loop's commands at the offered rate, LATENCY_C workers each on its own connection. */
async function rawLatency(layout: RedisLayout): Promise<Latency> {
  const q = benchQueue(`${layout}-rawlat`);
  const load = new OfferedLoad(RATE, LATENCY_N);
  const publisher = new Redis(URL_);
  let stopped = false;
  const workers = Array.from({ length: LATENCY_C }, async () => {
    const { client, pop } = popper();
    while (!stopped) {
      if (layout === 'legacy') {
        const body = await client.blmoveBuffer(q, `${q}:processing`, 'LEFT', 'RIGHT', 0.2);
        if (body === null) continue;
        load.seen(indexOf(body.toString()));
        await client.lrem(`${q}:processing`, 1, body);
      } else {
        const reply = await pop(`queues:${q}`, `queues:${q}:reserved`, `queues:${q}:notify`, Math.floor(Date.now() / 1000) + 90);
        if (reply === null) {
          await client.blpop(`queues:${q}:notify`, 0.2);
          continue;
        }
        load.seen(indexOf(reply[0].toString()));
        await client.zrem(`queues:${q}:reserved`, reply[1]);
      }
    }
    await client.quit();
  });
  try {
    return await load.run((i) => {
      const body = Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { ...DATA, i }, { queue: q })));
      return layout === 'zset'
        ? publisher.pipeline().rpush(`queues:${q}`, body).rpush(`queues:${q}:notify`, '1').exec()
        : publisher.rpush(q, body);
    });
  } finally {
    stopped = true;
    await Promise.all(workers);
    await publisher.quit();
    await cleanup(q);
  }
}

async function appSideLatency(layout: RedisLayout): Promise<Latency> {
  const q = benchQueue(`${layout}-applat`);
  try {
    return await appLatency(new RedisTransport({ url: URL_, layout, logger: silentLogger }), q, new OfferedLoad(RATE, LATENCY_N), LATENCY_C);
  } finally {
    await cleanup(q);
  }
}

type Side = 'app' | 'raw' | 'bullmq';
const runs = new Map<string, Sample[]>();
const record = (key: string, run: Sample) => {
  runs.set(key, [...(runs.get(key) ?? []), run]);
  process.stderr.write(`${key}: ${run.msgsPerSec} msgs/s, ${run.cpuUsPerMsg} µs CPU/msg\n`);
};
const key = (mode: string, layout: string, c: number, side: Side) => `${mode} ${layout} c=${c} ${side}`;

/** One round of one measurement: the App side over both layouts, the raw side over both, BullMQ; round r starts with side r mod 3. */
async function measureRound(
  r: number,
  mode: string,
  c: number,
  app: (layout: RedisLayout) => Promise<Sample>,
  raw: (layout: RedisLayout) => Promise<Sample>,
  bullmq: () => Promise<Sample>,
): Promise<void> {
  await inTurn(r, [
    async () => {
      for (const layout of LAYOUTS) record(key(mode, layout, c, 'app'), await app(layout));
    },
    async () => {
      for (const layout of LAYOUTS) record(key(mode, layout, c, 'raw'), await raw(layout));
    },
    async () => record(key(mode, 'bullmq', c, 'bullmq'), await bullmq()),
  ]);
}

// Warm-up, not recorded: the first runs in a process pay for the JIT and for loading the scripts.
for (const layout of LAYOUTS) {
  await appConsume(layout, 16);
  await rawConsume(layout, 16);
  if (MODES.includes('publish')) {
    await appPublish(layout, 16);
    await rawPublish(layout, 16);
  }
  if (MODES.includes('publishMany')) {
    await appPublishMany(layout);
    await rawPublishMany(layout);
  }
}
await bullConsume(16);
N = MESSAGES;

// Round after round, every side of every measurement once, so a load swing hits all alike;
// round r starts with side r mod 3 (App, raw, BullMQ), so no side always goes first.
for (let r = 0; r < ROUNDS; r++) {
  if (MODES.includes('publishMany')) {
    N = MANY_MESSAGES;
    await measureRound(r, 'publishMany', BATCH, appPublishMany, rawPublishMany, bullAddBulk);
    N = MESSAGES;
  }
  for (const c of CONCURRENCY) {
    if (MODES.includes('publish')) await measureRound(r, 'publish', c, (layout) => appPublish(layout, c), (layout) => rawPublish(layout, c), () => bullPublish(c));
    if (MODES.includes('consume')) await measureRound(r, 'consume', c, (layout) => appConsume(layout, c), (layout) => rawConsume(layout, c), () => bullConsume(c));
  }
}

const measurements: Measurement[] = [];
for (const mode of MODES.filter((m) => m !== 'latency')) {
  for (const layout of LAYOUTS) {
    // publishMany has no concurrency: its "concurrency" is the batch size.
    for (const c of mode === 'publishMany' ? [BATCH] : CONCURRENCY) {
      measurements.push(
        throughputMeasurement(`${mode} ${layout} c=${c}`, {
          app: throughputOf(runs.get(key(mode, layout, c, 'app'))!),
          raw: throughputOf(runs.get(key(mode, layout, c, 'raw'))!),
          bullmq: throughputOf(runs.get(key(mode, 'bullmq', c, 'bullmq'))!),
        }),
      );
    }
  }
}
// After the rounds above, which warmed the process (a warm-up round only when latency runs alone).
if (MODES.includes('latency')) {
  for (const layout of LAYOUTS) {
    const runs = await latencyRounds(() => rawLatency(layout), () => appSideLatency(layout), MODES.every((mode) => mode === 'latency'));
    measurements.push(latencyMeasurement(`latency ${layout} c=${LATENCY_C}`, RATE, runs));
  }
}
const info = await redis.info('server');
await redis.quit();
printReport({
  bench: 'redis',
  params: { redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown', messages: MESSAGES, publishManyMessages: MANY_MESSAGES, rounds: ROUNDS, modes: MODES.join(',') },
  measurements,
});
