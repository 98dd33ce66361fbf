/**
 * Kafka throughput through the App beside raw kafkajs doing the same work with
 * the same commit policy, on the same broker, in one run. JSON out.
 *
 *   BABELQUEUE_KAFKA_URL=kafka://127.0.0.1:9092 \
 *     node --conditions=source --import tsx bench/kafka/index.ts [messages=20000] [partitions=1] [window=100]
 *
 * - produce: one record per send, acks=all, at most `window` sends in flight.
 *   Raw: producer.send with the projection's headers and timestamp; App:
 *   app.publish (also makes and encodes the envelope).
 * - consume: autoCommit off, process-then-commit per partition, one record at a
 *   time in offset order, `partitions` partitions in parallel, commit at each
 *   batch end and at least every second. Raw: JSON.parse + resolveOffset +
 *   heartbeat per record; App: app.consume with a no-op handler (version
 *   gate, decode, validate, route, settle). Timed from the first record
 *   handled to the last, so the group join is not counted.
 */
import { Kafka, Partitioners, logLevel, type EachBatchPayload } from 'kafkajs';
import { createApp, EnvelopeCodec, projectKafka, silentLogger } from '@babelqueue/core';
import { KafkaTransport } from '@babelqueue/kafka';

const URL_ = process.env.BABELQUEUE_KAFKA_URL ?? 'kafka://127.0.0.1:9092';
const N = Number(process.argv[2] ?? 20_000);
const PARTITIONS = Number(process.argv[3] ?? 1);
const WINDOW = Number(process.argv[4] ?? 100);
const ROUNDS = 2;
const URN = 'urn:babel:orders:created';
const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };
const brokers = URL_.replace(/^kafka:\/\//, '').split(/[/?]/)[0]!.split(',');

const kafka = new Kafka({ brokers, clientId: 'bq-bench', logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
const stamp = `${process.pid}-${Date.now().toString(36)}`;
let topics = 0;
const fresh = async (label: string) => {
  const topic = `bq-bench-${label}-${stamp}-${topics++}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true });
  return topic;
};

const rate = (count: number, ms: number) => Math.round(count / (ms / 1000));

/** Runs `task(i)` for i < count with at most `window` in flight; returns elapsed ms. */
async function windowed(count: number, window: number, task: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(window, count) }, async () => {
    while (next < count) await task(next++);
  }));
  return performance.now() - start;
}

async function rawProduce(topic: string): Promise<number> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const ms = await windowed(N, WINDOW, async (i) => {
    const env = EnvelopeCodec.make(URN, { ...DATA, i }, { queue: topic });
    const { headers, timestamp } = projectKafka(env);
    await producer.send({ topic, acks: -1, messages: [{ value: Buffer.from(EnvelopeCodec.encode(env)), headers, timestamp }] });
  });
  await producer.disconnect();
  return rate(N, ms);
}

async function appProduce(topic: string): Promise<number> {
  const app = createApp({ transport: new KafkaTransport({ url: URL_, logger: silentLogger }), queue: topic, logger: silentLogger });
  const ms = await windowed(N, WINDOW, (i) => app.publish(URN, { ...DATA, i }));
  await app.close();
  return rate(N, ms);
}

/** Raw kafkajs with the binding's commit policy. */
async function rawConsume(topic: string): Promise<number> {
  const consumer = kafka.consumer({ groupId: `bq-bench-raw-${stamp}-${topics++}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  let first = 0;
  let last = 0;
  const done = new Promise<void>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: PARTITIONS,
      eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, uncommittedOffsets }: EachBatchPayload) => {
        let lastCommit = Date.now();
        for (const message of batch.messages) {
          if (first === 0) first = performance.now();
          JSON.parse(message.value!.toString('utf8'));
          resolveOffset(message.offset);
          if (Date.now() - lastCommit >= 1000) {
            await commitOffsetsIfNecessary(uncommittedOffsets());
            lastCommit = Date.now();
          }
          await heartbeat();
          if (++seen === N) {
            last = performance.now();
            resolve();
          }
        }
        await commitOffsetsIfNecessary(uncommittedOffsets());
      },
    });
  });
  await done;
  await consumer.disconnect();
  return rate(N - 1, last - first);
}

async function appConsume(topic: string): Promise<number> {
  let first = 0;
  let last = 0;
  let seen = 0;
  const transport = new KafkaTransport({ url: URL_, groupId: `bq-bench-app-${stamp}-${topics++}`, logger: silentLogger });
  const app = createApp({ transport, queue: topic, logger: silentLogger }).handle(URN, () => {
    if (first === 0) first = performance.now();
    if (++seen === N) last = performance.now();
  });
  await app.consume({ maxMessages: N, concurrency: PARTITIONS, idleMs: 30_000 });
  await app.close();
  return rate(N - 1, last - first);
}

const results = { rawProduce: [] as number[], appProduce: [] as number[], rawConsume: [] as number[], appConsume: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  const rawTopic = await fresh('raw');
  const appTopic = await fresh('app');
  results.rawProduce.push(await rawProduce(rawTopic));
  results.appProduce.push(await appProduce(appTopic));
  // Each side consumes what the other produced: identical records, fresh groups.
  results.rawConsume.push(await rawConsume(appTopic));
  results.appConsume.push(await appConsume(rawTopic));
  await admin.deleteTopics({ topics: [rawTopic, appTopic] }).catch(() => undefined);
}
await admin.disconnect();

const best = (xs: number[]) => Math.max(...xs);
const pair = (raw: number[], app: number[]) => ({
  rawMsgsPerSec: best(raw),
  appMsgsPerSec: best(app),
  appToRawRatio: Number((best(app) / best(raw)).toFixed(3)),
});
console.log(JSON.stringify({
  bench: 'kafka',
  messages: N,
  partitions: PARTITIONS,
  produceWindow: WINDOW,
  produce: pair(results.rawProduce, results.appProduce),
  consume: pair(results.rawConsume, results.appConsume),
  rounds: results,
  node: process.version,
}, null, 2));
