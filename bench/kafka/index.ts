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
 * - publishMany: batches of `window` records, one produce call each, acks=all.
 *   Raw: producer.send of the batch's records (made and encoded here too);
 *   App: app.publishMany of the batch. CPU µs per message beside msgs/s.
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

/** Msgs/s and this process's CPU µs per message of `run` (which sends `N` messages). */
async function cpuTimed(run: () => Promise<void>): Promise<{ msgsPerSec: number; cpuUsPerMsg: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { msgsPerSec: rate(N, ms), cpuUsPerMsg: Number(((used.user + used.system) / N).toFixed(1)) };
}

async function rawProduceBatched(topic: string) {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const sample = await cpuTimed(async () => {
    for (let i = 0; i < N; i += WINDOW) {
      const messages = Array.from({ length: Math.min(WINDOW, N - i) }, (_, k) => {
        const env = EnvelopeCodec.make(URN, { ...DATA, i: i + k }, { queue: topic });
        const { headers, timestamp } = projectKafka(env);
        return { value: Buffer.from(EnvelopeCodec.encode(env)), headers, timestamp };
      });
      await producer.send({ topic, acks: -1, messages });
    }
  });
  await producer.disconnect();
  return sample;
}

async function appPublishMany(topic: string) {
  const app = createApp({ transport: new KafkaTransport({ url: URL_, logger: silentLogger }), queue: topic, logger: silentLogger });
  await app.publish(URN, DATA); // connect the producer outside the timing, as the raw side does
  const sample = await cpuTimed(async () => {
    for (let i = 0; i < N; i += WINDOW) {
      await app.publishMany(URN, Array.from({ length: Math.min(WINDOW, N - i) }, (_, k) => ({ ...DATA, i: i + k })));
    }
  });
  await app.close();
  return sample;
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
const batched = { raw: [] as { msgsPerSec: number; cpuUsPerMsg: number }[], app: [] as { msgsPerSec: number; cpuUsPerMsg: number }[] };
for (let round = 0; round < ROUNDS; round++) {
  const rawTopic = await fresh('raw');
  const appTopic = await fresh('app');
  results.rawProduce.push(await rawProduce(rawTopic));
  results.appProduce.push(await appProduce(appTopic));
  // Each side consumes what the other produced: identical records, fresh groups.
  results.rawConsume.push(await rawConsume(appTopic));
  results.appConsume.push(await appConsume(rawTopic));
  const rawBatchTopic = await fresh('raw-batch');
  const appBatchTopic = await fresh('app-batch');
  batched.raw.push(await rawProduceBatched(rawBatchTopic));
  batched.app.push(await appPublishMany(appBatchTopic));
  await admin.deleteTopics({ topics: [rawTopic, appTopic, rawBatchTopic, appBatchTopic] }).catch(() => undefined);
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
  publishMany: {
    ...pair(batched.raw.map((x) => x.msgsPerSec), batched.app.map((x) => x.msgsPerSec)),
    rawCpuUsPerMsg: Math.min(...batched.raw.map((x) => x.cpuUsPerMsg)),
    appCpuUsPerMsg: Math.min(...batched.app.map((x) => x.cpuUsPerMsg)),
    rounds: batched,
  },
  rounds: results,
  node: process.version,
}, null, 2));
