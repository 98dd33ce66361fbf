/**
 * SQS throughput through the App beside raw @aws-sdk/client-sqs doing the same
 * work with the same batching, in one run. JSON out.
 *
 *   BABELQUEUE_SQS_URL=http://127.0.0.1:9324 \
 *     node --conditions=source --import tsx bench/sqs/index.ts [messages] [window] [concurrency]
 *
 * - publish: one SendMessage per message with the projection's attributes, at
 *   most `window` in flight. Raw: SendMessageCommand; App: app.publish (builds
 *   and encodes the envelope too).
 * - publishBatch: SendMessageBatch, 10 per call, at most `window` messages in
 *   flight. Raw: SendMessageBatchCommand; App side: SqsTransport.publishMany
 *   with envelopes made and encoded by the core (the App has no batch publish yet).
 * - consume: long-poll receive of up to 10, then a DeleteMessageBatch of what
 *   was handled. Raw: `concurrency / 10` receive loops, JSON.parse per message;
 *   App: app.consume with `concurrency`, a no-op handler (version gate, decode,
 *   validate, route, settle: deletes batched by the binding).
 *
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
import { createApp, EnvelopeCodec, projectSqs, silentLogger, type OutgoingMessage } from '@babelqueue/core';
import { SqsTransport } from '@babelqueue/sqs';

const ENDPOINT = process.env.BABELQUEUE_SQS_URL ?? 'http://127.0.0.1:9324';
const N = Number(process.argv[2] ?? 5000);
const WINDOW = Number(process.argv[3] ?? 50);
const CONCURRENCY = Number(process.argv[4] ?? 10);
const ROUNDS = 3;
const URN = 'urn:babel:orders:created';
const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };
const CLIENT = { endpoint: ENDPOINT, region: 'us-east-1', credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } };

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
  await Promise.all(Array.from({ length: Math.min(window, count) }, async () => {
    while (next < count) await task(next++);
  }));
}

/** An envelope as the App would make it, with its projection. */
function message(queue: string): OutgoingMessage {
  const env = EnvelopeCodec.make(URN, DATA, { queue });
  return {
    body: Buffer.from(EnvelopeCodec.encode(env)),
    queue,
    projection: {
      urn: env.job, traceId: env.trace_id, messageId: env.meta.id, schemaVersion: env.meta.schema_version,
      lang: env.meta.lang, createdAt: env.meta.created_at, attempts: env.attempts,
    },
  };
}

const sqs = new SQSClient(CLIENT);
const queues: string[] = [];
const fresh = async (label: string) => {
  const name = `bq-bench-${label}-${process.pid}-${Date.now().toString(36)}`;
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  queues.push(QueueUrl!);
  return { name, url: QueueUrl! };
};

async function rawPublish(url: string, queue: string): Promise<void> {
  await windowed(N, WINDOW, async () => {
    const m = message(queue);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: m.body.toString(), MessageAttributes: projectSqs(m.projection) }));
  });
}

async function rawPublishBatch(url: string, queue: string): Promise<void> {
  await windowed(Math.ceil(N / 10), Math.max(1, WINDOW / 10), async () => {
    const entries = Array.from({ length: 10 }, (_, i) => {
      const m = message(queue);
      return { Id: String(i), MessageBody: m.body.toString(), MessageAttributes: projectSqs(m.projection) };
    });
    const { Failed = [] } = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    if (Failed.length > 0) throw new Error(`raw batch: ${Failed.length} failed`);
  });
}

async function appPublishBatch(transport: SqsTransport, queue: string): Promise<void> {
  await windowed(Math.ceil(N / 10), Math.max(1, WINDOW / 10), async () => {
    const results = await transport.publishMany(Array.from({ length: 10 }, () => message(queue)));
    if (results.some((r) => !r.ok)) throw new Error('publishMany: a message failed');
  });
}

async function rawConsume(url: string, count: number): Promise<void> {
  let seen = 0;
  await Promise.all(Array.from({ length: Math.max(1, CONCURRENCY / 10) }, async () => {
    while (seen < count) {
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({
        QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30,
        MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
      }));
      if (Messages.length === 0) continue;
      for (const m of Messages) JSON.parse(m.Body!);
      await sqs.send(new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }));
      seen += Messages.length;
    }
  }));
}

function app(queue: string) {
  const transport = new SqsTransport({ ...CLIENT, waitTimeSeconds: 1, logger: silentLogger });
  const instance = createApp({ transport, queue, logger: silentLogger });
  instance.handle(URN, () => undefined);
  return { app: instance, transport };
}

const rounds = {
  publish: { raw: [] as Sample[], app: [] as Sample[] },
  publishBatch: { raw: [] as Sample[], app: [] as Sample[] },
  consume: { raw: [] as Sample[], app: [] as Sample[] },
};

for (let round = 0; round < ROUNDS; round++) {
  const raw = await fresh('raw');
  rounds.publish.raw.push(await timed(N, () => rawPublish(raw.url, raw.name)));
  rounds.consume.raw.push(await timed(N, () => rawConsume(raw.url, N)));
  rounds.publishBatch.raw.push(await timed(N, () => rawPublishBatch(raw.url, raw.name)));
  await rawConsume(raw.url, N);

  const ours = await fresh('app');
  const { app: publisher, transport } = app(ours.name);
  rounds.publish.app.push(await timed(N, () => windowed(N, WINDOW, () => publisher.publish(URN, DATA))));
  rounds.consume.app.push(await timed(N, () => publisher.consume({ maxMessages: N, concurrency: CONCURRENCY, idleMs: 5000 })));
  rounds.publishBatch.app.push(await timed(N, () => appPublishBatch(transport, ours.name)));
  await publisher.consume({ maxMessages: N, concurrency: CONCURRENCY, idleMs: 5000 });
  await publisher.close();
}

for (const QueueUrl of queues) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
sqs.destroy();

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
  bench: 'sqs',
  server: ENDPOINT,
  messages: N,
  window: WINDOW,
  concurrency: CONCURRENCY,
  publish: summary('publish'),
  publishBatch: summary('publishBatch'),
  consume: summary('consume'),
  node: process.version,
}, null, 2));
