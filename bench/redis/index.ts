/**
 * Redis throughput through the App beside a raw ioredis loop doing the same
 * commands, and beside BullMQ, on the same Redis, in one run. JSON out.
 *
 *   BABELQUEUE_REDIS_URL=redis://127.0.0.1:6379 \
 *     node --conditions=source --import tsx bench/redis/index.ts [messages=10000] [rounds=3]
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
 * - publishMany (per layout): batches of 100, one after the other. App:
 *   app.publishMany of the batch. Raw: the same writes of pre-encoded
 *   envelopes made in the loop (legacy one RPUSH of the batch; zset RPUSH of
 *   the batch + RPUSH :notify in one pipeline). BullMQ: Queue.addBulk of the
 *   batch. msgs/s and CPU µs per message.
 * BullMQ (same Redis, once per concurrency): Queue.add with the same window,
 * and a Worker with a no-op processor at that concurrency.
 * Best of `rounds` (the App and raw rounds alternate), messages/s.
 */
import { Redis } from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { createApp, EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { RedisTransport, type RedisLayout } from '@babelqueue/redis';

const URL_ = process.env.BABELQUEUE_REDIS_URL ?? 'redis://127.0.0.1:6379';
const N = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const URN = 'urn:babel:orders:created';
const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };
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
const stamp = `${process.pid}-${Date.now().toString(36)}`;
let made = 0;
const fresh = (label: string) => `bq-bench-${label}-${stamp}-${made++}`;
const rate = (count: number, ms: number) => Math.round(count / (ms / 1000));
const best = async (label: string, run: () => Promise<number>) => {
  let top = 0;
  for (let r = 0; r < ROUNDS; r++) top = Math.max(top, await run());
  process.stderr.write(`${label}: ${top} msgs/s\n`);
  return top;
};
/** Best of `rounds` for the App and the raw loop, the two alternating so load changes hit both alike. */
const pair = async (label: string, app: () => Promise<number>, raw: () => Promise<number>) => {
  const out = { app: 0, raw: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    out.app = Math.max(out.app, await app());
    out.raw = Math.max(out.raw, await raw());
  }
  process.stderr.write(`${label}: app ${out.app}, raw ${out.raw} msgs/s\n`);
  return out;
};

function bodies(queue: string): Buffer[] {
  return Array.from({ length: N }, (_, i) => Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { ...DATA, i }, { queue }))));
}

/** Runs `task(i)` for i < N with at most `window` in flight; returns elapsed ms. */
async function windowed(window: number, task: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(window, N) }, async () => {
    while (next < N) await task(next++);
  }));
  return performance.now() - start;
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

async function appPublish(layout: RedisLayout, c: number): Promise<number> {
  const q = fresh(`${layout}-apppub`);
  const transport = new RedisTransport({ url: URL_, layout, logger: silentLogger });
  const app = createApp({ transport, queue: q, logger: silentLogger });
  const ms = await windowed(c, (i) => app.publish(URN, { ...DATA, i }));
  await app.close();
  await cleanup(q);
  return rate(N, ms);
}

async function rawPublish(layout: RedisLayout, c: number): Promise<number> {
  const q = fresh(`${layout}-rawpub`);
  const client = new Redis(URL_);
  const ms = await windowed(c, (i) => {
    const body = Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { ...DATA, i }, { queue: q })));
    return layout === 'zset'
      ? client.pipeline().rpush(`queues:${q}`, body).rpush(`queues:${q}:notify`, '1').exec()
      : client.rpush(q, body);
  });
  await client.quit();
  await cleanup(q);
  return rate(N, ms);
}

async function appConsume(layout: RedisLayout, c: number): Promise<number> {
  const q = fresh(`${layout}-appcon`);
  await fill(layout, q);
  const transport = new RedisTransport({ url: URL_, layout, logger: silentLogger });
  const app = createApp({ transport, queue: q, logger: silentLogger });
  app.handle(URN, () => {});
  const start = performance.now();
  const handled = await app.consume({ concurrency: c, maxMessages: N, idleMs: 5000 });
  const ms = performance.now() - start;
  if (handled !== N) throw new Error(`app consumed ${handled} of ${N}`);
  await app.close();
  await cleanup(q);
  return rate(N, ms);
}

async function rawConsume(layout: RedisLayout, c: number): Promise<number> {
  const q = fresh(`${layout}-rawcon`);
  await fill(layout, q);
  const client = new Redis(URL_);
  client.defineCommand('rawPop', { numberOfKeys: 3, lua: RAW_POP });
  const pop = (client as unknown as { rawPopBuffer(...args: (string | number)[]): Promise<[Buffer, Buffer] | null> }).rawPopBuffer.bind(client);
  let done = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: c }, async () => {
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
  }));
  const ms = performance.now() - start;
  if (done !== N) throw new Error(`raw consumed ${done} of ${N}`);
  await client.quit();
  await cleanup(q);
  return rate(N, ms);
}

async function bullPublish(c: number): Promise<number> {
  const name = fresh('bull-pub');
  const connection = new Redis(URL_, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  const ms = await windowed(c, (i) => queue.add('job', { ...DATA, i }, { removeOnComplete: true }));
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  return rate(N, ms);
}

async function bullConsume(c: number): Promise<number> {
  const name = fresh('bull-con');
  const connection = new Redis(URL_, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  for (let i = 0; i < N; i += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, N - i) }, (_, j) => ({ name: 'job', data: { ...DATA, i: i + j }, opts: { removeOnComplete: true } })));
  }
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const start = performance.now();
  const workerConnection = new Redis(URL_, { maxRetriesPerRequest: null });
  const worker = new Worker(name, async () => {}, { connection: workerConnection, concurrency: c });
  worker.on('completed', () => {
    if (++done === N) finish();
  });
  await finished;
  const ms = performance.now() - start;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await Promise.all([connection.quit(), workerConnection.quit()]);
  return rate(N, ms);
}

const BATCH = 100;
interface Sample { msgsPerSec: number; cpuUsPerMsg: number }

/** Sends N messages in batches of BATCH through `send`; msgs/s and CPU µs per message of this process. */
async function batches(send: (from: number, count: number) => Promise<unknown>): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < N; i += BATCH) await send(i, Math.min(BATCH, N - i));
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { msgsPerSec: rate(N, ms), cpuUsPerMsg: +((used.user + used.system) / N).toFixed(1) };
}

async function appPublishMany(layout: RedisLayout): Promise<Sample> {
  const q = fresh(`${layout}-appmany`);
  const app = createApp({ transport: new RedisTransport({ url: URL_, layout, logger: silentLogger }), queue: q, logger: silentLogger });
  await app.publish(URN, DATA); // connected before the clock starts, as the raw client is
  const sample = await batches((from, count) => app.publishMany(URN, Array.from({ length: count }, (_, k) => ({ ...DATA, i: from + k }))));
  await app.close();
  await cleanup(q);
  return sample;
}

async function rawPublishMany(layout: RedisLayout): Promise<Sample> {
  const q = fresh(`${layout}-rawmany`);
  const client = new Redis(URL_);
  await client.ping();
  const sample = await batches((from, count) => {
    const batch = Array.from({ length: count }, (_, k) => Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, { ...DATA, i: from + k }, { queue: q }))));
    return layout === 'zset'
      ? client.pipeline().rpush(`queues:${q}`, ...batch).rpush(`queues:${q}:notify`, ...batch.map(() => '1')).exec()
      : client.rpush(q, ...batch);
  });
  await client.quit();
  await cleanup(q);
  return sample;
}

async function bullAddBulk(): Promise<Sample> {
  const name = fresh('bull-bulk');
  const connection = new Redis(URL_, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  await queue.waitUntilReady();
  const sample = await batches((from, count) =>
    queue.addBulk(Array.from({ length: count }, (_, k) => ({ name: 'job', data: { ...DATA, i: from + k }, opts: { removeOnComplete: true } }))));
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  return sample;
}

const publishMany: Record<string, { app: Sample[]; raw: Sample[] }> = {};
for (const layout of LAYOUTS) {
  const rounds = { app: [] as Sample[], raw: [] as Sample[] };
  await appPublishMany(layout); // warm-up, not counted: the first round pays the JIT for either side
  await rawPublishMany(layout);
  for (let r = 0; r < ROUNDS; r++) {
    rounds.app.push(await appPublishMany(layout));
    rounds.raw.push(await rawPublishMany(layout));
  }
  publishMany[layout] = rounds;
  process.stderr.write(`${layout} publishMany: app ${Math.max(...rounds.app.map((x) => x.msgsPerSec))}, raw ${Math.max(...rounds.raw.map((x) => x.msgsPerSec))} msgs/s\n`);
}
const bullBulk: Sample[] = [];
for (let r = 0; r < ROUNDS; r++) bullBulk.push(await bullAddBulk());

const measured = [];
for (const layout of LAYOUTS) {
  for (const c of CONCURRENCY) {
    const publish = await pair(`${layout} publish c=${c}`, () => appPublish(layout, c), () => rawPublish(layout, c));
    const consume = await pair(`${layout} consume c=${c}`, () => appConsume(layout, c), () => rawConsume(layout, c));
    measured.push({ layout, concurrency: c, publish, consume });
  }
}
// BullMQ last: its workers leave nothing running that could slow the others down.
const bull: Record<number, { publish: number; consume: number }> = {};
for (const c of CONCURRENCY) {
  bull[c] = { publish: await best(`bullmq publish c=${c}`, () => bullPublish(c)), consume: await best(`bullmq consume c=${c}`, () => bullConsume(c)) };
}
const results = measured.map(({ layout, concurrency: c, publish, consume }) => ({
  layout,
  concurrency: c,
  publish: { ...publish, appToRaw: +(publish.app / publish.raw).toFixed(2), bullmq: bull[c]!.publish },
  consume: {
    ...consume,
    appToRaw: +(consume.app / consume.raw).toFixed(2),
    bullmq: bull[c]!.consume,
    appToBullmq: +(consume.app / bull[c]!.consume).toFixed(2),
  },
}));
const info = await redis.info('server');
await redis.quit();
console.log(JSON.stringify({
  benchmark: 'redis',
  redis: /redis_version:(\S+)/.exec(info)?.[1],
  messages: N,
  rounds: ROUNDS,
  unit: 'messages/s',
  results,
  publishMany: {
    batch: BATCH,
    ...Object.fromEntries(Object.entries(publishMany).map(([layout, { app, raw }]) => {
      const top = (xs: Sample[]) => Math.max(...xs.map((x) => x.msgsPerSec));
      const lean = (xs: Sample[]) => Math.min(...xs.map((x) => x.cpuUsPerMsg));
      return [layout, {
        app: top(app), raw: top(raw), appToRaw: +(top(app) / top(raw)).toFixed(2),
        appCpuUsPerMsg: lean(app), rawCpuUsPerMsg: lean(raw), rounds: { app, raw },
      }];
    })),
    bullmqAddBulk: { msgsPerSec: Math.max(...bullBulk.map((x) => x.msgsPerSec)), cpuUsPerMsg: Math.min(...bullBulk.map((x) => x.cpuUsPerMsg)) },
  },
}, null, 2));
