/**
 * SQS throughput through the App beside raw @aws-sdk/client-sqs doing the same
 * work with the same batching, in one run. JSON out.
 *
 *   BABELQUEUE_SQS_URL=http://127.0.0.1:9324 \
 *     node --conditions=source --import tsx bench/sqs/index.ts [messages] [window] [concurrency] [modes] [rounds=3]
 *
 * `modes` (default all): a comma list of publish, publishBatch, consume.
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
 *
 * One warm-up round, then `rounds` rounds that alternate which side goes
 * first; medians of msgs/s and of this process's CPU µs per message. Both clients have made a request before the
 * clock starts (raw: CreateQueue; App: `transport.connect`).
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
import { compare, timed, type Sample } from '../support/measure.js';

const ENDPOINT = process.env.BABELQUEUE_SQS_URL ?? 'http://127.0.0.1:9324';
const N = Number(process.argv[2] ?? 5000);
const WINDOW = Number(process.argv[3] ?? 50);
const CONCURRENCY = Number(process.argv[4] ?? 10);
const MODES = new Set((process.argv[5] ?? 'publish,publishBatch,consume').split(','));
const ROUNDS = Number(process.argv[6] ?? 3);
const URN = 'urn:babel:orders:created';
const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };
const CLIENT = { endpoint: ENDPOINT, region: 'us-east-1', credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } };

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

async function appPublishBatch(publisher: Awaited<ReturnType<typeof app>>['app']): Promise<void> {
  await windowed(Math.ceil(N / 10), Math.max(1, WINDOW / 10), () => publisher.publishMany(URN, Array.from({ length: 10 }, () => DATA)));
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

async function app(queue: string) {
  const transport = new SqsTransport({ ...CLIENT, waitTimeSeconds: 1, logger: silentLogger });
  await transport.connect({ timeoutMs: 10_000 });
  const instance = createApp({ transport, queue, logger: silentLogger });
  instance.handle(URN, () => undefined);
  return { app: instance };
}

const rounds = {
  publish: { raw: [] as Sample[], app: [] as Sample[] },
  publishBatch: { raw: [] as Sample[], app: [] as Sample[] },
  consume: { raw: [] as Sample[], app: [] as Sample[] },
};

for (let round = 0; round < ROUNDS + 1; round++) {
  // Alternate which side goes first, so a burst of load elsewhere does not always hit the same side.
  const sides = round % 2 === 0 ? (['raw', 'app'] as const) : (['app', 'raw'] as const);
  for (const side of sides) {
    if (side === 'raw') {
      const raw = await fresh('raw');
      if (MODES.has('publish')) rounds.publish.raw.push(await timed(N, () => rawPublish(raw.url, raw.name)));
      else if (MODES.has('consume')) await rawPublish(raw.url, raw.name);
      if (MODES.has('consume')) rounds.consume.raw.push(await timed(N, () => rawConsume(raw.url, N)));
      else if (MODES.has('publish')) await rawConsume(raw.url, N);
      if (MODES.has('publishBatch')) {
        rounds.publishBatch.raw.push(await timed(N, () => rawPublishBatch(raw.url, raw.name)));
        await rawConsume(raw.url, N);
      }
    } else {
      const ours = await fresh('app');
      const { app: publisher } = await app(ours.name);
      const drain = () => publisher.consume({ maxMessages: N, concurrency: CONCURRENCY, idleMs: 5000 });
      if (MODES.has('publish')) rounds.publish.app.push(await timed(N, () => windowed(N, WINDOW, () => publisher.publish(URN, DATA))));
      else if (MODES.has('consume')) await rawPublish(ours.url, ours.name);
      if (MODES.has('consume')) rounds.consume.app.push(await timed(N, drain));
      else if (MODES.has('publish')) await drain();
      if (MODES.has('publishBatch')) {
        rounds.publishBatch.app.push(await timed(N, () => appPublishBatch(publisher)));
        await drain();
      }
      await publisher.close();
    }
  }
}

// The first round warms the AWS client's code up (its CPU per message is twice the later rounds'): not counted.
for (const side of Object.values(rounds)) {
  side.raw.shift();
  side.app.shift();
}

for (const QueueUrl of queues) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
sqs.destroy();

const measured = (mode: keyof typeof rounds) => (MODES.has(mode) ? compare(rounds[mode].raw, rounds[mode].app) : undefined);
console.log(JSON.stringify({
  bench: 'sqs',
  server: ENDPOINT,
  messages: N,
  window: WINDOW,
  concurrency: CONCURRENCY,
  rounds: ROUNDS,
  statistic: 'median',
  publish: measured('publish'),
  publishBatch: measured('publishBatch'),
  consume: measured('consume'),
  node: process.version,
}, null, 2));
