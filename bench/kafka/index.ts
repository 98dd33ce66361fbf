/**
 * Kafka throughput through the App beside raw kafkajs doing the same work with
 * the same commit policy, on the same broker, in one run. JSON out.
 *
 *   BABELQUEUE_KAFKA_URL=kafka://127.0.0.1:9092 \
 *     node --conditions=source --import tsx bench/kafka/index.ts [messages=20000] [partitions=1] [window=100] [rate=1000] [modes=all] [rounds=5]
 *
 * `modes` is a comma list of produce, publishMany, consume, consumeBindingOnly,
 * latency (default all). The topics the consume modes read are filled
 * beforehand by raw kafkajs in batches of `window` (untimed), alike for both
 * sides.
 *
 * - produce: one record per send, acks=all, at most `window` sends in flight.
 *   Raw: producer.send with the projection's headers and timestamp; App:
 *   app.publish (also makes and encodes the envelope). Each side writes one
 *   record before the clock starts (connects, fetches the topic's metadata).
 * - publishMany: batches of `window` records, one produce call each, acks=all.
 *   Raw: producer.send of the batch's records (made and encoded here too);
 *   App: app.publishMany of the batch.
 * - consume: autoCommit off, process-then-commit per partition, one record at a
 *   time in offset order, `partitions` partitions in parallel, commit at each
 *   batch end and at least every second. Raw: JSON.parse + resolveOffset +
 *   heartbeat per record; App: app.consume with a no-op handler (version
 *   gate, decode, validate, route, settle). Timed from the first record
 *   handled to the last, so the group join is not counted.
 * - consumeBindingOnly: the same, but the "app" side is KafkaTransport.consume
 *   acking every record without the App runtime: what the binding itself costs
 *   over kafkajs (the rest of the App's cost is the core runtime's).
 * - latency: publish → handler at `rate` records/s (default 1,000), one send
 *   per record, acks=all; p50/p99/p99.9 from each record's due time.
 *
 * Alternating rounds, medians; CPU µs per message is this process's CPU time.
 * Prints a Report (bench/support/report.ts).
 */
import { Kafka, Partitioners, logLevel, type EachBatchPayload } from 'kafkajs';
import { createApp, EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { projectKafka } from '@babelqueue/core/binding';
import { KafkaTransport } from '@babelqueue/kafka';
import { appLatency, indexOf, latencyRounds } from '../support/latency.js';
import { OfferedLoad, Span, timed, type Latency, type Sample } from '../support/measure.js';
import { latencyMeasurement, printReport } from '../support/report.js';
import { Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, publishInBatches, URN, windowed } from '../support/workload.js';

const URL_ = process.env.BABELQUEUE_KAFKA_URL ?? 'kafka://127.0.0.1:9092';
const N = Number(process.argv[2] ?? 20_000);
const PARTITIONS = Number(process.argv[3] ?? 1);
const WINDOW = Number(process.argv[4] ?? 100);
const RATE = Number(process.argv[5] ?? 1000);
const LATENCY_N = RATE * 3;
const MODES = new Set((process.argv[6] ?? 'produce,publishMany,consume,consumeBindingOnly,latency').split(','));
const ROUNDS = Number(process.argv[7] ?? 5);
const brokers = URL_.replace(/^kafka:\/\//, '').split(/[/?]/)[0]!.split(',');

const kafka = new Kafka({ brokers, clientId: 'bq-bench', logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
const stamp = `${process.pid}-${Date.now().toString(36)}`;
let topics = 0;
const fresh = async (label: string) => {
  const topic = benchQueue(label);
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true });
  return topic;
};

/** Record `i` for `topic` as the raw side writes it: the envelope made and encoded, its projection's headers and timestamp. */
function rawMessage(topic: string, i: number) {
  const env = EnvelopeCodec.make(URN, { ...DATA, i }, { queue: topic });
  const { headers, timestamp } = projectKafka(env);
  return { value: Buffer.from(EnvelopeCodec.encode(env)), headers, timestamp };
}

/**
 * A producer connected and warmed up on `topic` before the clock starts: one
 * record written, as the App side's first publish does (else the raw side's
 * first send would fetch the topic's metadata inside the timed run).
 */
async function rawProducer(topic: string) {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [rawMessage(topic, -1)] });
  return producer;
}

async function rawProduce(topic: string): Promise<Sample> {
  const producer = await rawProducer(topic);
  const sample = await timed(N, () => windowed(N, WINDOW, async (i) => {
    await producer.send({ topic, acks: -1, messages: [rawMessage(topic, i)] });
  }));
  await producer.disconnect();
  return sample;
}

async function rawProduceBatched(topic: string): Promise<Sample> {
  const producer = await rawProducer(topic);
  const sample = await timed(N, async () => {
    for (let i = 0; i < N; i += WINDOW) {
      const messages = Array.from({ length: Math.min(WINDOW, N - i) }, (_, k) => rawMessage(topic, i + k));
      await producer.send({ topic, acks: -1, messages });
    }
  });
  await producer.disconnect();
  return sample;
}

async function appPublishMany(topic: string): Promise<Sample> {
  const app = benchApp(new KafkaTransport({ url: URL_, logger: silentLogger }), topic);
  await app.publish(URN, { ...DATA, i: -1 }); // connects the producer before the clock starts, as the raw side does
  const sample = await timed(N, () => publishInBatches(app, N, WINDOW));
  await app.close();
  return sample;
}

async function appProduce(topic: string): Promise<Sample> {
  const app = benchApp(new KafkaTransport({ url: URL_, logger: silentLogger }), topic);
  await app.publish(URN, { ...DATA, i: -1 }); // connects; one record more on the topic, consumed like the rest
  const sample = await timed(N, () => windowed(N, WINDOW, (i) => app.publish(URN, { ...DATA, i })));
  await app.close();
  return sample;
}

/**
 * Raw kafkajs with the binding's commit policy: autoCommit off, per record
 * resolveOffset + heartbeat, commit at each batch end and at least every second.
 */
async function rawGroup(topic: string, onRecord: (value: Buffer) => void) {
  const consumer = kafka.consumer({ groupId: `bq-bench-raw-${stamp}-${topics++}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: PARTITIONS,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, uncommittedOffsets }: EachBatchPayload) => {
      let lastCommit = Date.now();
      for (const message of batch.messages) {
        onRecord(message.value!);
        resolveOffset(message.offset);
        if (Date.now() - lastCommit >= 1000) {
          await commitOffsetsIfNecessary(uncommittedOffsets());
          lastCommit = Date.now();
        }
        await heartbeat();
      }
      await commitOffsetsIfNecessary(uncommittedOffsets());
    },
  });
  return consumer;
}

async function rawConsume(topic: string): Promise<Sample> {
  const span = new Span(N);
  let seen = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const consumer = await rawGroup(topic, (value) => {
    JSON.parse(value.toString('utf8'));
    span.tick();
    if (++seen === N) done();
  });
  await finished;
  await consumer.disconnect();
  return span.result;
}

async function appConsume(topic: string): Promise<Sample> {
  const span = new Span(N);
  const transport = new KafkaTransport({ url: URL_, groupId: `bq-bench-app-${stamp}-${topics++}`, logger: silentLogger });
  const app = createApp({ transport, queue: topic, logger: silentLogger }).handle(URN, () => span.tick());
  await app.consume({ maxMessages: N, concurrency: PARTITIONS, idleMs: 30_000 });
  await app.close();
  return span.result;
}

/** The binding alone: KafkaTransport.consume acking every record, no App runtime (what the binding adds over kafkajs). */
async function transportConsume(topic: string): Promise<Sample> {
  const span = new Span(N);
  const transport = new KafkaTransport({ url: URL_, groupId: `bq-bench-binding-${stamp}-${topics++}`, logger: silentLogger });
  await transport.consume(topic, async (delivery) => {
    span.tick();
    await delivery.settle({ kind: 'ack' });
  }, { concurrency: PARTITIONS, signal: new AbortController().signal, maxMessages: N, idleMs: 30_000 });
  await transport.close();
  return span.result;
}

async function rawLatency(): Promise<Latency> {
  const topic = await fresh('raw-latency');
  const load = new OfferedLoad(RATE, LATENCY_N);
  const consumer = await rawGroup(topic, (value) => load.seen(indexOf(value.toString('utf8'))));
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    return await load.run(async (i) => {
      await producer.send({ topic, acks: -1, messages: [rawMessage(topic, i)] });
    });
  } finally {
    await producer.disconnect();
    await consumer.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  }
}

async function appSideLatency(): Promise<Latency> {
  const topic = await fresh('app-latency');
  const transport = new KafkaTransport({ url: URL_, groupId: `bq-bench-app-${stamp}-${topics++}`, logger: silentLogger });
  try {
    return await appLatency(transport, topic, new OfferedLoad(RATE, LATENCY_N), PARTITIONS);
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  }
}

const rounds = new Rounds();
for (let round = 0; round < ROUNDS; round++) {
  // Alternate which side goes first.
  const sides = round % 2 === 0 ? (['raw', 'app'] as const) : (['app', 'raw'] as const);
  const produced = [await fresh('raw-produce'), await fresh('app-produce')] as const;
  if (MODES.has('produce')) {
    for (const side of sides) {
      if (side === 'raw') rounds.add('produce', 'raw', await rawProduce(produced[0]));
      else rounds.add('produce', 'app', await appProduce(produced[1]));
    }
  }
  // The consume modes read topics written alike (raw kafkajs, batches of `window`): the
  // produce topics differ in layout (the App's publishes leave in batches, raw's one by
  // one), and a record batch of one costs a consumer more to decode than one of many.
  const rawTopic = await fresh('raw');
  const appTopic = await fresh('app');
  if (MODES.has('consume') || MODES.has('consumeBindingOnly')) {
    await rawProduceBatched(rawTopic);
    await rawProduceBatched(appTopic);
  }
  if (MODES.has('consume')) {
    for (const side of sides) {
      if (side === 'raw') rounds.add('consume', 'raw', await rawConsume(appTopic));
      else rounds.add('consume', 'app', await appConsume(rawTopic));
    }
  }
  // The binding alone beside raw, on the same records again (fresh groups).
  if (MODES.has('consumeBindingOnly')) {
    for (const side of sides) {
      if (side === 'raw') rounds.add('consumeBindingOnly', 'raw', await rawConsume(appTopic));
      else rounds.add('consumeBindingOnly', 'app', await transportConsume(rawTopic));
    }
  }
  const rawBatchTopic = await fresh('raw-batch');
  const appBatchTopic = await fresh('app-batch');
  if (MODES.has('publishMany')) {
    for (const side of sides) {
      if (side === 'raw') rounds.add('publishMany', 'raw', await rawProduceBatched(rawBatchTopic));
      else rounds.add('publishMany', 'app', await appPublishMany(appBatchTopic));
    }
  }
  await admin.deleteTopics({ topics: [...produced, rawTopic, appTopic, rawBatchTopic, appBatchTopic] }).catch(() => undefined);
}
// After the rounds above; alone, it warms the process up first.
const latency = MODES.has('latency') ? await latencyRounds(rawLatency, appSideLatency, MODES.size === 1) : undefined;
await admin.disconnect();

// In consumeBindingOnly, "app" is the binding without the App runtime: KafkaTransport.consume acking each record.
printReport({
  bench: 'kafka',
  params: { messages: N, partitions: PARTITIONS, produceWindow: WINDOW, rounds: ROUNDS },
  measurements: [...rounds.measurements(), ...(latency !== undefined ? [latencyMeasurement('latency', RATE, latency)] : [])],
});
