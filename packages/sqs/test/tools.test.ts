import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigurationError, createApp, redrive, transportFromUrl as fromRegistry } from '@babelqueue/core';
import { parseSqsUrl, SqsTransport, transportFromUrl } from '@babelqueue/sqs';
import { CREDENTIALS, Raw, sqs, sqsUrl, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 30_000;

describe('sqs:// URLs (the Python SDK\'s spelling)', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['sqs://', {}],
    ['sqs://us-east-1', { region: 'us-east-1' }],
    ['sqs://eu-west-1?endpoint=http://127.0.0.1:9324', { region: 'eu-west-1', endpoint: 'http://127.0.0.1:9324' }],
    ['sqs://?endpoint=http%3A%2F%2Flocalhost%3A4566&prefix=http://localhost:4566/000000000000', { endpoint: 'http://localhost:4566', queueUrlPrefix: 'http://localhost:4566/000000000000' }],
    ['sqs://us-east-1?fifo=1&group_id=tenant-a&content_dedup=true', { region: 'us-east-1', fifo: true, messageGroupId: 'tenant-a', contentBasedDeduplication: true }],
    ['sqs://us-east-1?fifo=off&content_dedup=0', { region: 'us-east-1', fifo: false, contentBasedDeduplication: false }],
    ['sqs://us-east-1?wait_time=5&visibility_timeout=120', { region: 'us-east-1', waitTimeSeconds: 5, visibilityTimeoutSeconds: 120 }],
    ['sqs://us-east-1?browse_work_queues=1', { region: 'us-east-1', browseWorkQueues: true }],
  ];
  for (const [url, expected] of cases) {
    it(url, () => assert.deepEqual(parseSqsUrl(url), expected));
  }

  const refused: [string, RegExp][] = [
    ['redis://127.0.0.1', /starts with sqs:\/\//],
    ['sqs://key:hunter2@us-east-1', /carries no credentials/],
    ['sqs://us-east-1/orders', /no port or path/],
    ['sqs://us-east-1?waittime=5', /unknown SQS URL option "waittime"; known: endpoint, prefix, fifo, group_id, wait_time, visibility_timeout, content_dedup, browse_work_queues/],
    ['sqs://us-east-1?wait_time=soon', /wait_time must be a whole number/],
    ['sqs://us-east-1?wait_time=21', /waitTimeSeconds must be an integer from 0 to 20/],
    ['sqs://us-east-1?fifo=maybe', /fifo must be 1\/0/],
  ];
  for (const [url, expected] of refused) {
    it(`refuses ${url.replace('hunter2', '***')}`, () => {
      assert.throws(() => transportFromUrl(url), (e: Error) => e instanceof ConfigurationError && expected.test(e.message) && !e.message.includes('hunter2'));
    });
  }

  it('the core registry loads @babelqueue/sqs for sqs://', async () => {
    const t = await fromRegistry('sqs://us-east-1?endpoint=http://127.0.0.1:1&visibility_timeout=45');
    try {
      assert.ok(t instanceof SqsTransport, 'an SqsTransport');
      assert.equal(t.target, 'sqs://us-east-1?endpoint=http://127.0.0.1:1');
      assert.equal(t.reservationMs?.('q'), 45_000);
    } finally {
      await t.close();
    }
  });

  it('options are checked at construction', () => {
    assert.throws(() => new SqsTransport({ visibilityTimeoutSeconds: 0 }), /visibilityTimeoutSeconds must be an integer from 1 to 43200/);
    assert.throws(() => new SqsTransport({ waitTimeSeconds: 2.5 }), /waitTimeSeconds must be an integer from 0 to 20/);
    assert.throws(() => new SqsTransport({ visibilityTimout: 5 } as never), /unknown SqsTransport option "visibilityTimout"/);
  });
});

describe('SQS browse, purge and redrive', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  it('browse reads a DLQ\'s bodies and leaves them visible; purge deletes and counts them; an absent queue is empty', async () => {
    const { dlqName: name, dlqUrl: url } = await raw.fresh('browse', { dlq: true });
    for (let i = 0; i < 12; i++) await raw.send(url!, `{"i":${i}}`);
    const { transport: t } = transport();
    try {
      const first = await t.browse(name, 100);
      assert.deepEqual(first.map((b) => b.toString()).sort(), Array.from({ length: 12 }, (_, i) => `{"i":${i}}`).sort());
      assert.equal((await t.browse(name, 5)).length, 5, 'at most max');
      assert.equal((await raw.counts(url!)).visible, 12, 'visible again at once');
      assert.equal(await t.purge(name), 12);
      assert.deepEqual(await raw.counts(url!), { visible: 0, inFlight: 0, delayed: 0 });
      assert.deepEqual(await t.browse('bq-sqs-no-such-queue-dlq', 10), []);
      assert.equal(await t.purge('bq-sqs-no-such-queue'), 0);
    } finally {
      await t.close();
    }
  });

  it('depth counts the visible messages; remove deletes one by its bytes, leaves the others visible, and says false when none matches', async () => {
    const { dlqName: name, dlqUrl: url } = await raw.fresh('remove', { dlq: true });
    for (let i = 0; i < 12; i++) await raw.send(url!, `{"i":${i}}`);
    const { transport: t } = transport();
    try {
      assert.equal(await t.depth(name), 12);
      assert.equal(await t.remove(name, Buffer.from('{"i":7}')), true);
      assert.deepEqual(await raw.counts(url!), { visible: 11, inFlight: 0, delayed: 0 }, 'the others are visible again at once');
      assert.equal(await t.depth(name), 11);
      assert.equal(await t.remove(name, Buffer.from('{"i":7}')), false, 'already gone');
      const left = (await t.browse(name, 100)).map((b) => b.toString()).sort();
      assert.deepEqual(left, Array.from({ length: 12 }, (_, i) => `{"i":${i}}`).filter((b) => b !== '{"i":7}').sort());
      assert.equal(await t.depth('bq-sqs-no-such-queue'), 0);
      assert.equal(await t.remove('bq-sqs-no-such-queue-dlq', Buffer.from('{}')), false);
    } finally {
      await t.close();
    }
  });

  it('scan is a leased read: every visible message once, all visible again when it ends, even one stopped mid-batch', async () => {
    const { dlqName: name, dlqUrl: url } = await raw.fresh('scan', { dlq: true });
    for (let i = 0; i < 12; i++) await raw.send(url!, `{"i":${i}}`);
    const { transport: t } = transport();
    try {
      assert.equal(t.capabilities.scan, 'leased');
      const read: string[] = [];
      for await (const record of t.scan(name)) read.push(record.body.toString());
      assert.deepEqual(read.sort(), Array.from({ length: 12 }, (_, i) => `{"i":${i}}`).sort(), 'each message once');
      assert.deepEqual(await raw.counts(url!), { visible: 12, inFlight: 0, delayed: 0 }, 'all visible again when the scan ends');
      for await (const record of t.scan(name, { offset: 2 })) {
        assert.equal(record.index, 2);
        break; // mid-batch: the rest of the batch was received too and must be given back
      }
      assert.deepEqual(await raw.counts(url!), { visible: 12, inFlight: 0, delayed: 0 }, 'a scan stopped mid-batch gives back the whole batch');
      assert.deepEqual(await all(t.scan('bq-sqs-no-such-queue-dlq')), [], 'an absent queue reads as empty');
    } finally {
      await t.close();
    }
  });

  it('browse and remove refuse a work queue, so reading it never costs a message an attempt; browseWorkQueues lets them read it', async () => {
    const q = await raw.fresh('browse-work', { dlq: true });
    const { transport: t, logger } = transport();
    const a = createApp({ transport: t, queue: q.name, logger });
    const seen: number[] = [];
    a.handle(URN, (_data, message) => void seen.push(message.attempts));
    await a.publish(URN, { n: 1 });
    const refused = (operation: string) => (e: Error) => e.name === 'WorkQueueBrowseError'
      && e.message.includes(`refusing to ${operation} SQS queue "${q.name}": it is not a dead-letter queue`)
      && e.message.includes('set browseWorkQueues: true (URL browse_work_queues=1)');
    await assert.rejects(t.browse(q.name, 10), refused('browse'));
    await assert.rejects(t.remove(q.name, Buffer.from('{}')), refused('remove'));
    assert.deepEqual(await t.browse(q.dlqName, 10), [], 'its DLQ reads as usual');
    const fifo = await raw.fresh('browse-work', { fifo: true, dlq: true });
    await assert.rejects(t.browse(fifo.name, 10), { name: 'WorkQueueBrowseError' });
    assert.deepEqual(await t.browse(fifo.dlqName, 10), [], 'a FIFO DLQ (<queue>-dlq.fifo) too');
    await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
    await a.close();
    assert.deepEqual(seen, [1], 'the message was never received before its handler ran');

    await raw.send(q.url, '{"n":2}');
    const { transport: any } = transport({ browseWorkQueues: true });
    try {
      assert.deepEqual((await any.browse(q.name, 10)).map(String), ['{"n":2}']);
      assert.equal(await any.remove(q.name, Buffer.from('{"n":2}')), true);
    } finally {
      await any.close();
    }
  });

  it('redrive moves a dead-lettered record back from <queue>-dlq, reset, and it is handled again', async () => {
    const q = await raw.fresh('redrive', { dlq: true });
    const { transport: t, logger } = transport();
    const a = createApp({ transport: t, queue: q.name, maxAttempts: 1, deadLetter: true, logger });
    let fail = true;
    const seen: number[] = [];
    a.handle(URN, (_data, message) => {
      seen.push(message.envelope.attempts);
      if (fail) throw new Error('first time');
    });
    const id = await a.publish(URN, { n: 1 });
    await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
    const result = await redrive(t, { from: q.dlqName, max: 1, idleMs: IDLE_MS });
    assert.deepEqual(result.items.map((i) => [i.messageId, i.reason, i.to, i.redriven]), [[id, 'failed', q.name, true]]);
    fail = false;
    await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
    await a.close();
    assert.deepEqual(seen, [0, 0], 'attempts reset to 0 in the body');
    assert.deepEqual(await raw.counts(q.dlqUrl!), { visible: 0, inFlight: 0, delayed: 0 });
  });

  it('transportFromUrl with the lab endpoint and explicit credentials works end to end', async () => {
    const q = await raw.fresh('from-url');
    const t = transportFromUrl(sqsUrl('&wait_time=1'), { credentials: CREDENTIALS });
    const a = createApp({ transport: t, queue: q.name });
    const got: unknown[] = [];
    a.handle(URN, (data) => void got.push(data));
    await a.publish(URN, { via: 'url' });
    await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
    await a.close();
    assert.deepEqual(got, [{ via: 'url' }]);
  });
});

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
