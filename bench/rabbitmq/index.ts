/**
 * RabbitMQ through the App beside raw amqplib doing the same work with the
 * same acknowledgement mode, in one run, alternating rounds. JSON out.
 *
 *   BABELQUEUE_RABBITMQ_URL=amqp://guest:guest@127.0.0.1:5672 \
 *     node --conditions=source --import tsx bench/rabbitmq/index.ts [messages] [prefetch] [rate] [modes] [rounds=3]
 *
 * `modes` (default all): a comma list of publish, publishMany, consume,
 * consumeBindingOnly, get, latency.
 *
 * - publish: persistent, publisher-confirmed, at most `prefetch` unconfirmed in
 *   flight. Raw: ConfirmChannel.sendToQueue with the projection's properties and
 *   a confirm callback; App: app.publish (builds and encodes the envelope too).
 * - consume: basic.consume, prefetch `prefetch`, manual ack. Raw: parse the
 *   JSON body and ack each message; App: app.consume in `consume` mode with a
 *   no-op handler (version gate, decode, validate, route, settle; its acks are
 *   coalesced with `multiple`).
 * - consumeBindingOnly: the same, but the "app" side is RabbitMqTransport.consume
 *   acking every delivery without the App runtime: what the binding itself
 *   costs over amqplib (the rest of the App's cost is the core runtime's).
 * - publishMany: batches of `prefetch`, persistent and confirmed. Raw: every
 *   message of a batch sent on a ConfirmChannel, then its confirms awaited;
 *   App: app.publishMany of the batch (one confirm window).
 * - get: basic.get + ack, one at a time (the spec's documented mode). Raw: get,
 *   parse, ack; App: `get` mode, concurrency 1, on a tenth of the messages.
 * - latency: publish → handler at `rate` messages/s (default 1,000), confirmed
 *   publishes, prefetch `prefetch`; p50/p99/p99.9 from each message's due time,
 *   after the throughput rounds (bench/support/latency.ts).
 *
 * Medians over the rounds; CPU µs per message is this process's CPU time.
 * Both sides are connected before the clock starts (raw: the connection; App:
 * `transport.connect`); each opens its channel and the App declares its queue
 * inside it, as a first publish does. Prints a Report (bench/support/report.ts)
 * whose modes are publishConfirmed, publishMany, consumePrefetch,
 * consumeBindingOnly, basicGet and latency.
 */
import { connect, type ConfirmChannel } from 'amqplib';
import { EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { projectProperties, RabbitMqTransport } from '@babelqueue/rabbitmq';
import { appLatency, indexOf, latencyRounds } from '../support/latency.js';
import { OfferedLoad, type Latency } from '../support/measure.js';
import { latencyMeasurement, printReport } from '../support/report.js';
import { Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, publishInBatches, URN, windowed } from '../support/workload.js';

const URL_ = process.env.BABELQUEUE_RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const N = Number(process.argv[2] ?? 20_000);
const PREFETCH = Number(process.argv[3] ?? 100);
const RATE = Number(process.argv[4] ?? 1000);
const GET_N = Math.max(100, Math.floor(N / 10));
const LATENCY_N = RATE * 4;
const ROUNDS = Number(process.argv[6] ?? 3);
const MODES = new Set((process.argv[5] ?? 'publish,publishMany,consume,consumeBindingOnly,get,latency').split(','));

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
  const queue = benchQueue(label);
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

async function app(queue: string, mode: 'consume' | 'get') {
  const transport = new RabbitMqTransport({ url: URL_, mode, logger: silentLogger });
  // Connected before any clock starts, as the raw side's connection is.
  await transport.connect({ timeoutMs: 10_000 });
  return benchApp(transport, queue);
}

/** The binding alone: RabbitMqTransport.consume acking every delivery, no App runtime (what this binding adds over amqplib). */
async function transportConsume(queue: string, count: number): Promise<void> {
  const transport = new RabbitMqTransport({ url: URL_, logger: silentLogger });
  await transport.consume(queue, (delivery) => delivery.settle({ kind: 'ack' }), {
    concurrency: PREFETCH, signal: new AbortController().signal, maxMessages: count, idleMs: 5000,
  });
  await transport.close();
}

async function rawLatency(): Promise<Latency> {
  const queue = await fresh('raw-latency');
  const load = new OfferedLoad(RATE, LATENCY_N);
  const consumer = await model.createChannel();
  await consumer.prefetch(PREFETCH);
  await consumer.consume(queue, (message) => {
    if (message === null) return;
    load.seen(indexOf(message.content.toString('utf8')));
    consumer.ack(message);
  }, { noAck: false });
  const publisher = await model.createConfirmChannel();
  const result = await load.run((i) => {
    const { body, properties } = rawMessage(queue, i);
    return new Promise<void>((resolve, reject) => publisher.sendToQueue(queue, body, properties, (error) => (error ? reject(error) : resolve())));
  });
  await publisher.close();
  await consumer.close();
  return result;
}

async function appSideLatency(): Promise<Latency> {
  return appLatency(new RabbitMqTransport({ url: URL_, logger: silentLogger }), await fresh('app-latency'), new OfferedLoad(RATE, LATENCY_N), PREFETCH);
}

// The measurements' modes, by the name `modes` selects them with.
const MODE = {
  publish: 'publishConfirmed',
  publishMany: 'publishMany',
  consume: 'consumePrefetch',
  consumeBindingOnly: 'consumeBindingOnly',
  get: 'basicGet',
} as const;
const rounds = new Rounds();

for (let round = 0; round < ROUNDS; round++) {
  // Alternate which side goes first, so a burst of load elsewhere does not always hit the same side.
  const sides = round % 2 === 0 ? (['raw', 'app'] as const) : (['app', 'raw'] as const);
  for (const side of sides) {
    if (side === 'raw') {
      const rawQueue = await fresh('raw');
      if (MODES.has('publish')) await rounds.time(MODE.publish, 'raw', N, () => rawPublish(rawQueue, N));
      // consume reads what publish wrote (or a fill when publish is not measured)
      if (MODES.has('consume')) {
        if (!MODES.has('publish')) await rawPublish(rawQueue, N);
        await rounds.time(MODE.consume, 'raw', N, () => rawConsume(rawQueue, N));
      }
      if (MODES.has('consumeBindingOnly')) {
        const bareQueue = await fresh('raw-bare');
        await rawPublish(bareQueue, N);
        await rounds.time(MODE.consumeBindingOnly, 'raw', N, () => rawConsume(bareQueue, N));
      }
      if (MODES.has('get')) {
        const rawGetQueue = await fresh('raw-get');
        await rawPublish(rawGetQueue, GET_N);
        await rounds.time(MODE.get, 'raw', GET_N, () => rawGet(rawGetQueue, GET_N));
      }
      if (MODES.has('publishMany')) {
        const rawBatchQueue = await fresh('raw-batch');
        await rounds.time(MODE.publishMany, 'raw', N, () => rawPublishBatched(rawBatchQueue, N));
      }
    } else {
      const appQueue = await fresh('app');
      const publisher = await app(appQueue, 'consume');
      if (MODES.has('publish')) await rounds.time(MODE.publish, 'app', N, () => windowed(N, PREFETCH, () => publisher.publish(URN, DATA)));
      if (MODES.has('consume')) {
        if (!MODES.has('publish')) await rawPublish(appQueue, N);
        await rounds.time(MODE.consume, 'app', N, () => publisher.consume({ maxMessages: N, concurrency: PREFETCH, idleMs: 5000 }));
      }
      await publisher.close();
      if (MODES.has('consumeBindingOnly')) {
        const bindingQueue = await fresh('binding');
        await rawPublish(bindingQueue, N);
        await rounds.time(MODE.consumeBindingOnly, 'app', N, () => transportConsume(bindingQueue, N));
      }
      if (MODES.has('get')) {
        const appGetQueue = await fresh('app-get');
        await rawPublish(appGetQueue, GET_N);
        const getter = await app(appGetQueue, 'get');
        await rounds.time(MODE.get, 'app', GET_N, () => getter.consume({ maxMessages: GET_N, concurrency: 1, idleMs: 5000 }));
        await getter.close();
      }
      if (MODES.has('publishMany')) {
        const batcher = await app(await fresh('app-batch'), 'consume');
        await rounds.time(MODE.publishMany, 'app', N, () => publishInBatches(batcher, N, PREFETCH));
        await batcher.close();
      }
    }
  }
  for (const queue of queues.splice(0)) await admin.deleteQueue(queue);
}

const throughput = [...MODES].some((mode) => mode !== 'latency');
const latency = MODES.has('latency') ? await latencyRounds(rawLatency, appSideLatency, !throughput) : undefined;
for (const queue of queues.splice(0)) await admin.deleteQueue(queue);
await model.close();

// In consumeBindingOnly, "app" is the binding without the App runtime: RabbitMqTransport.consume acking each delivery.
printReport({
  bench: 'rabbitmq',
  params: { messages: N, getMessages: GET_N, prefetch: PREFETCH, rounds: ROUNDS },
  measurements: [...rounds.measurements(), ...(latency ? [latencyMeasurement('latency', RATE, latency)] : [])],
});
