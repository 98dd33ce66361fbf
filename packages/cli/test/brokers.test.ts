import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { broker, uniqueQueue, type BrokerName } from '../../../test/support/brokers.js';
import amqp from 'amqplib';
import { until } from '../../../test/support/until.js';
import { jsonLines, run } from './support/capture.js';

/** Each broker's URL for the CLI; Kafka needs retry tiers for the demo's retry path. */
const SUITES: [BrokerName, (url: string) => string][] = [
  ['redis', (url) => url],
  ['rabbitmq', (url) => url],
  ['kafka', (url) => `${url}${url.includes('?') ? '&' : '?'}retryTiersMs=200`],
];
/** Bounds a command that stops at --max: only a failing run waits this long. */
const IDLE_MS = '30000';
/** How long a check that the DLQ is empty listens (nothing should arrive). */
const EMPTY_IDLE_MS = '1000';

for (const [name, urlFor] of SUITES) {
  const b = broker(name);
  describe(`babelqueue on ${name}`, { skip: b.skip }, () => {
    test('demo dead-letters the payment; dlq redrive --dry-run, then --id, sends it back reset; consume shows it', async () => {
      const url = urlFor(b.url!);
      const queue = uniqueQueue('cli');
      const demo = await run(['demo', '--url', url, '--queue', queue, '--json']);
      assert.equal(demo.code, 0, demo.err);
      const report = jsonLines(demo.out)[0]!;
      const id = report.published[2].id as string;
      assert.deepEqual(report.deliveries.filter((d: any) => d.id === id).map((d: any) => d.outcome), ['retry', 'retry', 'dead-lettered']);

      const dry = await run(['dlq', 'redrive', '--url', url, '--queue', queue, '--dry-run', '--max', '1', '--idle-ms', IDLE_MS, '--json']);
      assert.equal(dry.code, 0, dry.err);
      const dryResult = jsonLines(dry.out)[0]!;
      assert.deepEqual(dryResult.items.map((i: any) => [i.messageId, i.to, i.redriven, i.reason]), [[id, queue, false, 'failed']]);

      const done = await run(['dlq', 'redrive', '--url', url, '--queue', queue, '--id', id, '--max', '1', '--idle-ms', IDLE_MS, '--json']);
      assert.equal(done.code, 0, done.err);
      assert.equal(jsonLines(done.out)[0]!.redriven, 1);

      const consumed = await run(['consume', '--url', url, '--queue', queue, '--max', '1', '--idle-ms', IDLE_MS, '--json']);
      assert.equal(consumed.code, 0, consumed.err);
      const [envelope] = jsonLines(consumed.out);
      assert.equal(envelope!.meta.id, id);
      assert.equal(envelope!.attempts, 0);
      assert.equal(envelope!.dead_letter, undefined);

      const empty = await run(['dlq', 'redrive', '--url', url, '--queue', queue, '--dry-run', '--idle-ms', EMPTY_IDLE_MS, '--json']);
      assert.deepEqual(jsonLines(empty.out)[0]!.items, []);
    });
  });
}

const redis = broker('redis');
for (const layout of ['legacy', 'zset'] as const) {
  describe(`babelqueue dlq list|show|purge on redis (${layout} layout)`, { skip: redis.skip }, () => {
    test('the demo\'s dead letter is listed and shown in place, then purge --yes deletes it', async () => {
      const url = layout === 'zset' ? `${redis.url!}?layout=zset` : redis.url!;
      const queue = uniqueQueue('cli-dlq');
      const demo = await run(['demo', '--url', url, '--queue', queue, '--json']);
      assert.equal(demo.code, 0, demo.err);
      const id = jsonLines(demo.out)[0]!.published[2].id as string;

      for (let i = 0; i < 2; i++) {
        const list = await run(['dlq', 'list', '--url', url, '--queue', queue, '--json']);
        assert.equal(list.code, 0, list.err);
        const listed = jsonLines(list.out)[0]!;
        assert.equal(listed.dlq, `${queue}.dlq`);
        assert.deepEqual(listed.records.map((r: any) => [r.id, r.reason, r.attempts, r.original_queue]), [[id, 'failed', 3, queue]], 'browsing leaves it there');
      }
      const show = await run(['dlq', 'show', '--url', url, '--queue', queue, id, '--json']);
      assert.equal(show.code, 0, show.err);
      assert.equal(jsonLines(show.out)[0]!.dead_letter.error, 'Payment gateway timeout');

      const purged = await run(['dlq', 'purge', '--url', url, '--queue', queue, '--yes', '--json']);
      assert.equal(purged.code, 0, purged.err);
      assert.deepEqual(jsonLines(purged.out)[0], { dlq: `${queue}.dlq`, purged: 1 });
      const empty = await run(['dlq', 'list', '--url', url, '--queue', queue]);
      assert.equal(empty.code, 0, empty.err);
      assert.equal(empty.out, `${queue}.dlq is empty\n`);
    });
  });
}

describe('babelqueue demo on redis', { skip: redis.skip }, () => {
  test('the demo runs until its own messages are done: one left on its queue beforehand does not cut it short', async () => {
    const url = redis.url!;
    const queue = uniqueQueue('cli-demo');
    const earlier = await run(['publish', '--url', url, '--queue', queue, 'urn:babel:orders:created', '{"order_id":1}']);
    assert.equal(earlier.code, 0, earlier.err);
    const demo = await run(['demo', '--url', url, '--queue', queue, '--json']);
    assert.equal(demo.code, 0, demo.err);
    const report = jsonLines(demo.out)[0]!;
    const ids = new Set(report.published.map((p: any) => p.id as string));
    const payment = report.published[2].id as string;
    assert.deepEqual(report.deliveries.filter((d: any) => d.id === payment).map((d: any) => d.outcome), ['retry', 'retry', 'dead-lettered']);
    assert.equal(report.deliveries.length, 6, 'three orders once, the payment three times');
    assert.ok(report.deliveries.every((d: any) => ids.has(d.id)), 'only the demo\'s own messages are reported');
    assert.deepEqual(report.dead_letters.map((r: any) => r.meta.id), [payment]);
  });
});

// SQS: the queues must exist (the binding creates none unless told to), and the
// credentials come from the standard AWS chain: here the environment, with any
// static key the lab's SQS-compatible server accepts.
const sqsLab = broker('sqs');
describe('babelqueue on sqs', { skip: sqsLab.skip }, () => {
  const url = `sqs://us-east-1?endpoint=${sqsLab.url}&wait_time=1`;
  const created: string[] = [];
  let client: SQSClient;
  before(() => {
    process.env.AWS_ACCESS_KEY_ID ??= 'babelqueue';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'babelqueue';
    client = new SQSClient({ endpoint: sqsLab.url!, region: 'us-east-1' });
  });
  after(async () => {
    for (const QueueUrl of created) await client.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
    client.destroy();
  });
  const queues = async (queue: string) => {
    for (const QueueName of [queue, `${queue}-dlq`]) created.push((await client.send(new CreateQueueCommand({ QueueName }))).QueueUrl!);
  };

  test('demo dead-letters to <queue>-dlq; dlq list and show browse it in place; redrive sends it back; purge empties the DLQ', async () => {
    const queue = uniqueQueue('cli-sqs');
    await queues(queue);
    const demo = await run(['demo', '--url', url, '--queue', queue, '--json']);
    assert.equal(demo.code, 0, demo.err);
    const id = jsonLines(demo.out)[0]!.published[2].id as string;

    for (let i = 0; i < 2; i++) {
      const list = await run(['dlq', 'list', '--url', url, '--queue', queue, '--json']);
      assert.equal(list.code, 0, list.err);
      const listed = jsonLines(list.out)[0]!;
      assert.equal(listed.dlq, `${queue}-dlq`);
      assert.deepEqual(listed.records.map((r: any) => [r.id, r.reason, r.attempts, r.original_queue]), [[id, 'failed', 3, queue]], 'browsing leaves it there');
    }
    const show = await run(['dlq', 'show', '--url', url, '--queue', queue, id, '--json']);
    assert.equal(show.code, 0, show.err);
    assert.equal(jsonLines(show.out)[0]!.dead_letter.error, 'Payment gateway timeout');

    const done = await run(['dlq', 'redrive', '--url', url, '--queue', queue, '--id', id, '--max', '1', '--idle-ms', IDLE_MS, '--json']);
    assert.equal(done.code, 0, done.err);
    assert.equal(jsonLines(done.out)[0]!.redriven, 1);
    const consumed = await run(['consume', '--url', url, '--queue', queue, '--max', '1', '--idle-ms', IDLE_MS, '--json']);
    assert.equal(consumed.code, 0, consumed.err);
    const [envelope] = jsonLines(consumed.out);
    assert.equal(envelope!.meta.id, id);
    assert.equal(envelope!.attempts, 0);
    assert.equal(envelope!.dead_letter, undefined);

    // One more dead letter, then purge.
    assert.equal((await run(['demo', '--url', url, '--queue', queue, '--json'])).code, 0);
    const purged = await run(['dlq', 'purge', '--url', url, '--queue', queue, '--yes', '--json']);
    assert.equal(purged.code, 0, purged.err);
    assert.deepEqual(jsonLines(purged.out)[0], { dlq: `${queue}-dlq`, purged: 1 });
    const empty = await run(['dlq', 'list', '--url', url, '--queue', queue]);
    assert.equal(empty.out, `${queue}-dlq is empty\n`);
  });

  test('a missing queue: one line naming create_queues=1; with it in the URL, publish creates the queue and consume reads it', async () => {
    const queue = uniqueQueue('cli-sqs-new');
    const missing = await run(['consume', '--url', url, '--queue', queue, '--max', '1', '--idle-ms', EMPTY_IDLE_MS]);
    assert.equal(missing.code, 1, missing.err);
    assert.match(missing.err, new RegExp(`^babelqueue: .*the SQS queue "${queue}" does not exist; .*create_queues=1`));

    const creating = `${url}&create_queues=1`;
    try {
      const published = await run(['publish', '--url', creating, '--queue', queue, 'urn:babel:orders:created', '{"order_id":1}']);
      assert.equal(published.code, 0, published.err);
      const consumed = await run(['consume', '--url', creating, '--queue', queue, '--max', '1', '--idle-ms', IDLE_MS, '--json']);
      assert.equal(consumed.code, 0, consumed.err);
      assert.deepEqual(jsonLines(consumed.out)[0]!.data, { order_id: 1 });
    } finally {
      const found = await client.send(new GetQueueUrlCommand({ QueueName: queue })).catch(() => undefined);
      if (found?.QueueUrl !== undefined) created.push(found.QueueUrl);
    }
  });
});

const rabbit = broker('rabbitmq');
describe('babelqueue dlq list|show on a RabbitMQ quorum DLQ with a delivery limit', { skip: rabbit.skip }, () => {
  test('refuses to read it (each read counts a delivery; at the limit RabbitMQ drops the record), loses nothing, and reads it with --allow-counted-reads', async () => {
    const queue = uniqueQueue('cli-qq');
    const dlq = `${queue}.dlq`;
    const connection = await amqp.connect(rabbit.url!);
    try {
      const channel = await connection.createChannel();
      await channel.assertQueue(dlq, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 } });
      for (let i = 0; i < 3; i++) channel.sendToQueue(dlq, Buffer.from(JSON.stringify({ job: 'urn:babel:t:x', trace_id: `t-${i}`, data: {}, meta: { id: `m-${i}`, queue, lang: 'go', schema_version: 1, created_at: 1 }, attempts: 0 })), { persistent: true });
      await until(async () => (await channel.checkQueue(dlq)).messageCount === 3, 10_000, 'three records on the quorum DLQ');
      for (let read = 0; read < 6; read++) {
        const refused = await run(['dlq', read % 2 === 0 ? 'list' : 'show', ...(read % 2 === 0 ? [] : ['m-1']), '--url', rabbit.url!, '--queue', queue]);
        assert.equal(refused.code, 1, refused.err);
        assert.match(refused.err, /it is a quorum queue.*x-delivery-count.*--allow-counted-reads/s);
      }
      assert.equal((await channel.checkQueue(dlq)).messageCount, 3, 'nothing lost');
      const listed = await run(['dlq', 'list', '--url', rabbit.url!, '--queue', queue, '--allow-counted-reads', '--json']);
      assert.equal(listed.code, 0, listed.err);
      assert.equal(jsonLines(listed.out)[0]!.count, 3);
      await channel.deleteQueue(dlq);
    } finally {
      await connection.close();
    }
  });
});

/** A refused login: the URL of the lab broker with credentials it does not know. */
const WRONG_LOGIN: [BrokerName, (url: string) => string, RegExp][] = [
  ['redis', (url) => url.replace('redis://', 'redis://nobody:hunter2@'), /WRONGPASS/],
  ['rabbitmq', (url) => url.replace(/\/\/[^@]*@/, '//guest:hunter2@'), /ACCESS_REFUSED/],
];

for (const [name, wrong, reason] of WRONG_LOGIN) {
  const b = broker(name);
  describe(`babelqueue with a wrong password on ${name}`, { skip: b.skip }, () => {
    test('consume and dlq list end with one clear line and exit 1: no retry loop, no stack, no password', async () => {
      for (const argv of [['consume', '--queue', 'q'], ['dlq', 'list', '--queue', 'q']]) {
        const r = await run([...argv, '--url', wrong(b.url!)]);
        assert.equal(r.code, 1, `${argv.join(' ')}: ${r.err}`);
        assert.equal(r.err.split('\n').filter((line) => line !== '').length, 1, r.err);
        assert.match(r.err, /^babelqueue: cannot connect to /);
        assert.match(r.err, reason);
        assert.ok(!r.err.includes('hunter2'), "!r.err.includes('hunter2')");
        assert.doesNotMatch(r.err, /\n\s+at /);
      }
    });
  });
}
