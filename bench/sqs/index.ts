/**
 * SQS throughput through the App beside raw @aws-sdk/client-sqs doing the same
 * work with the same batching, in one run. JSON out.
 *
 *   BABELQUEUE_SQS_URL=http://127.0.0.1:9324 \
 *     node --conditions=source --import tsx bench/sqs/index.ts [messages=5000] [window=50] [concurrency=10] [rounds=3] [rate=200] [modes=publish,consume,publishBatch,latency]
 *
 * `modes` (default all): a comma list of publish, consume, publishBatch,
 * latency. Without publish, consume reads a queue filled beforehand by the
 * raw client (untimed).
 *
 * - publish: one SendMessage per message with the projection's attributes, at
 *   most `window` in flight. Raw: SendMessageCommand; App: app.publish (builds
 *   and encodes the envelope too).
 * - publishBatch: SendMessageBatch, 10 per call, at most `window` messages in
 *   flight. Raw: SendMessageBatchCommand; App: app.publishMany of 10 payloads
 *   (builds and encodes the envelopes too), the same number of calls in flight.
 * - consume: long-poll receive of up to 10, then a DeleteMessageBatch of what
 *   was handled. Raw: `concurrency / 10` receive loops, JSON.parse per message;
 *   App: app.consume with `concurrency`, a no-op handler (version gate, decode,
 *   validate, route, settle: deletes batched by the binding).
 * - latency: publish → handler at `rate` messages/s, one SendMessage per
 *   message, the consume above at `concurrency`; p50/p99/p99.9 from each
 *   message's due time (bench/support/latency.ts), over `rate` × 10 messages.
 *   Raw: SendMessageCommand + the receive loops (parse, DeleteMessageBatch);
 *   App: app.publish + app.consume. Five rounds (`LATENCY_ROUNDS`), after the others. The rate
 *   defaults to 200/s, not the 1,000 of the other benches: a single send
 *   costs this process about 0.7 ms of CPU through the AWS client and
 *   ElasticMQ takes about 1,000–1,200 of them a second on the lab's 2 cores,
 *   so 1,000/s would measure a backlog, not the latency.
 *
 * One uncounted warm-up round (the AWS client's first round costs about twice
 * the CPU per message of the later ones), then `rounds` rounds, the side that
 * goes first alternating, medians (bench/support). Both clients have made a
 * request before the clock starts (raw: CreateQueue; App: `transport.connect`).
 * Credentials: any static key (the lab's ElasticMQ accepts every key).
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { silentLogger } from '@babelqueue/core';
import { projectSqs } from '@babelqueue/core/binding';
import { SqsTransport } from '@babelqueue/sqs';
import { appLatency, indexOf, latencyRounds } from '../support/latency.js';
import { OfferedLoad, type Latency } from '../support/measure.js';
import { latencyMeasurement, printReport } from '../support/report.js';
import { alternate, Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, encoded, URN, windowed } from '../support/workload.js';

const ENDPOINT = process.env.BABELQUEUE_SQS_URL ?? 'http://127.0.0.1:9324';
const N = Number(process.argv[2] ?? 5000);
const WINDOW = Number(process.argv[3] ?? 50);
const CONCURRENCY = Number(process.argv[4] ?? 10);
const ROUNDS = Number(process.argv[5] ?? 3);
const RATE = Number(process.argv[6] ?? 200);
const LATENCY_N = RATE * 10;
const MODES = new Set((process.argv[7] ?? 'publish,consume,publishBatch,latency').split(','));
const CLIENT = { endpoint: ENDPOINT, region: 'us-east-1', credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } };

/** Message `i` for `queue` as the binding sends it: body and message attributes. */
function rawEntry(queue: string, i: number) {
  const { body, projection } = encoded(queue, i);
  return { MessageBody: body.toString(), MessageAttributes: projectSqs(projection) };
}

const sqs = new SQSClient(CLIENT);
const queues: string[] = [];
const fresh = async (label: string) => {
  const name = benchQueue(label);
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  queues.push(QueueUrl!);
  return { name, url: QueueUrl! };
};

async function rawPublish(url: string, queue: string): Promise<void> {
  await windowed(N, WINDOW, async (i) => {
    await sqs.send(new SendMessageCommand({ QueueUrl: url, ...rawEntry(queue, i) }));
  });
}

async function rawPublishBatch(url: string, queue: string): Promise<void> {
  await windowed(Math.ceil(N / 10), Math.max(1, WINDOW / 10), async (call) => {
    const entries = Array.from({ length: 10 }, (_, k) => ({ Id: String(k), ...rawEntry(queue, call * 10 + k) }));
    const { Failed = [] } = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    if (Failed.length > 0) throw new Error(`raw batch: ${Failed.length} failed`);
  });
}

async function appPublishBatch(publisher: Awaited<ReturnType<typeof app>>): Promise<void> {
  await windowed(Math.ceil(N / 10), Math.max(1, WINDOW / 10), (call) => publisher.publishMany(URN, Array.from({ length: 10 }, (_, k) => ({ ...DATA, i: call * 10 + k }))));
}

/** `concurrency / 10` long-poll receive loops while `more()`: each body to `handle`, then one DeleteMessageBatch of what came. */
async function receiveLoops(url: string, more: () => boolean, handle: (body: string) => void): Promise<void> {
  await Promise.all(Array.from({ length: Math.max(1, CONCURRENCY / 10) }, async () => {
    while (more()) {
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({
        QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30,
        MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
      }));
      if (Messages.length === 0) continue;
      for (const m of Messages) handle(m.Body!);
      await sqs.send(new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }));
    }
  }));
}

async function rawConsume(url: string, count: number): Promise<void> {
  let seen = 0;
  await receiveLoops(url, () => seen < count, (body) => {
    JSON.parse(body);
    seen += 1;
  });
}

async function rawLatency(): Promise<Latency> {
  const raw = await fresh('sqs-raw-latency');
  const load = new OfferedLoad(RATE, LATENCY_N);
  let stopped = false;
  const receiving = receiveLoops(raw.url, () => !stopped, (body) => load.seen(indexOf(body)));
  try {
    return await load.run((i) => sqs.send(new SendMessageCommand({ QueueUrl: raw.url, ...rawEntry(raw.name, i) })));
  } finally {
    stopped = true;
    await receiving;
  }
}

async function app(queue: string) {
  const transport = new SqsTransport({ ...CLIENT, waitTimeSeconds: 1, logger: silentLogger });
  await transport.connect({ timeoutMs: 10_000 }); // before the clock, as the raw client's first request is
  return benchApp(transport, queue);
}

let rounds = new Rounds();

async function rawRound(): Promise<void> {
  const raw = await fresh('sqs-raw');
  if (MODES.has('publish')) await rounds.time('publish', 'raw', N, () => rawPublish(raw.url, raw.name));
  else if (MODES.has('consume')) await rawPublish(raw.url, raw.name);
  if (MODES.has('consume')) await rounds.time('consume', 'raw', N, () => rawConsume(raw.url, N));
  if (MODES.has('publishBatch')) {
    await rounds.time('publishBatch', 'raw', N, () => rawPublishBatch(raw.url, raw.name));
    await rawConsume(raw.url, N);
  }
}

async function appRound(): Promise<void> {
  const ours = await fresh('sqs-app');
  const publisher = await app(ours.name);
  if (MODES.has('publish')) await rounds.time('publish', 'app', N, () => windowed(N, WINDOW, (i) => publisher.publish(URN, { ...DATA, i })));
  else if (MODES.has('consume')) await rawPublish(ours.url, ours.name);
  if (MODES.has('consume')) await rounds.time('consume', 'app', N, () => publisher.consume({ maxMessages: N, concurrency: CONCURRENCY, idleMs: 5000 }));
  if (MODES.has('publishBatch')) {
    await rounds.time('publishBatch', 'app', N, () => appPublishBatch(publisher));
    await publisher.consume({ maxMessages: N, concurrency: CONCURRENCY, idleMs: 5000 });
  }
  await publisher.close();
}

const throughput = MODES.has('publish') || MODES.has('consume') || MODES.has('publishBatch');
if (throughput) {
  await alternate(1, [rawRound, appRound]); // the warm-up round, not counted
  rounds = new Rounds();
  await alternate(ROUNDS, [rawRound, appRound]);
}

async function appSideLatency(): Promise<Latency> {
  const ours = await fresh('sqs-app-latency');
  const transport = new SqsTransport({ ...CLIENT, waitTimeSeconds: 1, logger: silentLogger });
  await transport.connect({ timeoutMs: 10_000 });
  return appLatency(transport, ours.name, new OfferedLoad(RATE, LATENCY_N), CONCURRENCY);
}
const latency = MODES.has('latency') ? await latencyRounds(rawLatency, appSideLatency, !throughput) : undefined;

for (const QueueUrl of queues) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
sqs.destroy();

printReport({
  bench: 'sqs',
  params: { server: ENDPOINT, messages: N, window: WINDOW, concurrency: CONCURRENCY, rounds: ROUNDS },
  measurements: [...rounds.measurements(), ...(latency !== undefined ? [latencyMeasurement('latency', RATE, latency)] : [])],
});
