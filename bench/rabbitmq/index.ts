/**
 * RabbitMQ throughput through the App beside raw amqplib doing the same work
 * with the same acknowledgement mode, in one run. JSON out.
 *
 *   BABELQUEUE_RABBITMQ_URL=amqp://guest:guest@127.0.0.1:5672 \
 *     node --conditions=source --import tsx bench/rabbitmq/index.ts [messages] [prefetch]
 *
 * - publish: persistent, publisher-confirmed, at most `prefetch` unconfirmed in
 *   flight. Raw: ConfirmChannel.sendToQueue with the projection's properties and
 *   a confirm callback; App: app.publish (builds and encodes the envelope too).
 * - consume: basic.consume, prefetch `prefetch`, manual ack per message. Raw:
 *   parse the JSON body and ack; App: app.consume in `consume` mode with a no-op
 *   handler (version gate, decode, validate, route, settle).
 * - publishMany: batches of `prefetch`, persistent and confirmed. Raw: every
 *   message of a batch sent on a ConfirmChannel, then its confirms awaited;
 *   App: app.publishMany of the batch (one confirm window).
 * - get: basic.get + ack, one at a time (the spec's documented mode). Raw: get,
 *   parse, ack; App: `get` mode, concurrency 1, on a tenth of the messages.
 */
import { connect, type ConfirmChannel } from 'amqplib';
import { createApp, EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { projectProperties, RabbitMqTransport } from '@babelqueue/rabbitmq';

const URL_ = process.env.BABELQUEUE_RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const N = Number(process.argv[2] ?? 20_000);
const PREFETCH = Number(process.argv[3] ?? 100);
const GET_N = Math.max(100, Math.floor(N / 10));
const ROUNDS = 3;
const URN = 'urn:babel:orders:created';
const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };

interface Sample {
  msgsPerSec: number;
  /** CPU time of this process per message (user + system), in µs: steadier than wall time on a busy machine. */
  cpuUsPerMsg: number;
}

async function timed(count: number, run: () => Promise<unknown>): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { msgsPerSec: Math.round(count / seconds), cpuUsPerMsg: Number(((used.user + used.system) / count).toFixed(1)) };
}

/** Runs `task(i)` for i < count with at most `window` in flight. */
async function windowed(count: number, window: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(window, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

function rawMessage(queue: string, i: number) {
  const env = EnvelopeCodec.make(URN, { ...DATA, i }, { queue });
  const projection = {
    urn: env.job, traceId: env.trace_id, messageId: env.meta.id, schemaVersion: env.meta.schema_version,
    lang: env.meta.lang, createdAt: env.meta.created_at, attempts: env.attempts,
  };
  return { body: Buffer.from(EnvelopeCodec.encode(env)), properties: projectProperties(projection) };
}

const model = await connect(URL_, { noDelay: true });
const admin = await model.createChannel();
const queues: string[] = [];
const fresh = async (label: string) => {
  const queue = `bq-bench-${label}-${process.pid}-${Date.now().toString(36)}`;
  await admin.assertQueue(queue, { durable: true });
  queues.push(queue);
  return queue;
};

async function rawPublish(queue: string, count: number): Promise<void> {
  const channel: ConfirmChannel = await model.createConfirmChannel();
  await windowed(count, PREFETCH, (i) => {
    const { body, properties } = rawMessage(queue, i);
    return new Promise<void>((resolve, reject) =>
      channel.sendToQueue(queue, body, properties, (error) => (error ? reject(error) : resolve())),
    );
  });
  await channel.close();
}

async function rawPublishBatched(queue: string, count: number): Promise<void> {
  const channel: ConfirmChannel = await model.createConfirmChannel();
  for (let i = 0; i < count; i += PREFETCH) {
    const batch = Array.from({ length: Math.min(PREFETCH, count - i) }, (_, k) => rawMessage(queue, i + k));
    await Promise.all(batch.map(({ body, properties }) => new Promise<void>((resolve, reject) =>
      channel.sendToQueue(queue, body, properties, (error) => (error ? reject(error) : resolve())),
    )));
  }
  await channel.close();
}

async function appPublishMany(publisher: ReturnType<typeof app>, count: number): Promise<void> {
  for (let i = 0; i < count; i += PREFETCH) {
    await publisher.publishMany(URN, Array.from({ length: Math.min(PREFETCH, count - i) }, (_, k) => ({ ...DATA, i: i + k })));
  }
}

async function rawConsume(queue: string, count: number): Promise<void> {
  const channel = await model.createChannel();
  await channel.prefetch(PREFETCH);
  let seen = 0;
  await new Promise<void>((resolve) => {
    void channel.consume(queue, (message) => {
      if (message === null) return;
      JSON.parse(message.content.toString('utf8'));
      channel.ack(message);
      if (++seen === count) resolve();
    }, { noAck: false });
  });
  await channel.close();
}

async function rawGet(queue: string, count: number): Promise<void> {
  const channel = await model.createChannel();
  for (let seen = 0; seen < count; ) {
    const message = await channel.get(queue, { noAck: false });
    if (message === false) continue;
    JSON.parse(message.content.toString('utf8'));
    channel.ack(message);
    seen += 1;
  }
  await channel.close();
}

function app(queue: string, mode: 'consume' | 'get') {
  const transport = new RabbitMqTransport({ url: URL_, mode, logger: silentLogger });
  const instance = createApp({ transport, queue, logger: silentLogger });
  instance.handle(URN, () => undefined);
  return instance;
}

const rounds = {
  publish: { raw: [] as Sample[], app: [] as Sample[] },
  publishMany: { raw: [] as Sample[], app: [] as Sample[] },
  consume: { raw: [] as Sample[], app: [] as Sample[] },
  get: { raw: [] as Sample[], app: [] as Sample[] },
};

for (let round = 0; round < ROUNDS; round++) {
  // publish (confirmed), then consume what was published
  const rawQueue = await fresh('raw');
  rounds.publish.raw.push(await timed(N, () => rawPublish(rawQueue, N)));
  rounds.consume.raw.push(await timed(N, () => rawConsume(rawQueue, N)));

  const appQueue = await fresh('app');
  const publisher = app(appQueue, 'consume');
  rounds.publish.app.push(await timed(N, () => windowed(N, PREFETCH, () => publisher.publish(URN, DATA))));
  rounds.consume.app.push(await timed(N, () => publisher.consume({ maxMessages: N, concurrency: PREFETCH, idleMs: 5000 })));
  await publisher.close();

  // batched publish (confirm window per batch)
  const rawBatchQueue = await fresh('raw-batch');
  rounds.publishMany.raw.push(await timed(N, () => rawPublishBatched(rawBatchQueue, N)));
  await admin.purgeQueue(rawBatchQueue);
  const appBatchQueue = await fresh('app-batch');
  const batcher = app(appBatchQueue, 'consume');
  rounds.publishMany.app.push(await timed(N, () => appPublishMany(batcher, N)));
  await batcher.close();
  await admin.purgeQueue(appBatchQueue);

  // basic.get + ack
  const rawGetQueue = await fresh('raw-get');
  await rawPublish(rawGetQueue, GET_N);
  rounds.get.raw.push(await timed(GET_N, () => rawGet(rawGetQueue, GET_N)));

  const appGetQueue = await fresh('app-get');
  await rawPublish(appGetQueue, GET_N);
  const getter = app(appGetQueue, 'get');
  rounds.get.app.push(await timed(GET_N, () => getter.consume({ maxMessages: GET_N, concurrency: 1, idleMs: 5000 })));
  await getter.close();
}

for (const queue of queues) await admin.deleteQueue(queue);
await model.close();

const best = (xs: Sample[]) => Math.max(...xs.map((x) => x.msgsPerSec));
const leanest = (xs: Sample[]) => Math.min(...xs.map((x) => x.cpuUsPerMsg));
const summary = (name: keyof typeof rounds) => {
  const { raw, app: ours } = rounds[name];
  return {
    rawMsgsPerSec: best(raw),
    appMsgsPerSec: best(ours),
    appToRawRatio: Number((best(ours) / best(raw)).toFixed(3)),
    rawCpuUsPerMsg: leanest(raw),
    appCpuUsPerMsg: leanest(ours),
    rounds: rounds[name],
  };
};
console.log(JSON.stringify({
  bench: 'rabbitmq',
  messages: N,
  getMessages: GET_N,
  prefetch: PREFETCH,
  publishConfirmed: summary('publish'),
  publishMany: summary('publishMany'),
  consumePrefetch: summary('consume'),
  basicGet: summary('get'),
  node: process.version,
}, null, 2));
