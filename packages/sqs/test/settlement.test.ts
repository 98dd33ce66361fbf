import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { createApp, withAttempts, type AppOptions, type Message } from '@babelqueue/core';
import type { SqsTransportOptions } from '@babelqueue/sqs';
import { envelope, Raw, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 30_000;

/** Every settlement path of a valid envelope, through createApp, on the lab server. */
describe('SQS settlement through the App', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  function app(queue: string, options: Partial<AppOptions> = {}, transportOptions: SqsTransportOptions = {}) {
    const { transport: t, logger } = transport(transportOptions);
    return { app: createApp({ transport: t, queue, logger, ...options }), transport: t, logger };
  }

  it('a retry is a release: the same bytes come back, and attempts are reconciled from ApproximateReceiveCount', async () => {
    const q = await raw.fresh('retry');
    const { body, projection } = envelope(URN, { order_id: 2 }, q.name);
    const { app: a, transport: t } = app(q.name, { maxAttempts: 3 });
    await t.publish({ body, queue: q.name, projection });
    const seen: Message[] = [];
    a.handle(URN, (_data, message) => {
      seen.push(message);
      if (seen.length < 3) throw new Error('not yet');
    });
    assert.equal(await a.consume({ maxMessages: 3, idleMs: IDLE_MS }), 3);
    await a.close();
    assert.deepEqual(seen.map((m) => m.attempts), [1, 2, 3], 'counted attempt = ApproximateReceiveCount');
    for (const m of seen) {
      assert.ok(m.body.equals(body), 'the body is never rewritten or re-sent');
      assert.equal(m.envelope.attempts, 0);
      assert.equal(m.id, projection.messageId);
    }
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });

  it('a body count above the native one is never lowered', async () => {
    const q = await raw.fresh('body-count');
    const { body, projection } = envelope(URN, {}, q.name);
    const { app: a, transport: t } = app(q.name);
    await t.publish({ body: withAttempts(body, 5), queue: q.name, projection });
    const seen: number[] = [];
    a.handle(URN, (_data, message) => void seen.push(message.attempts));
    await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
    await a.close();
    assert.deepEqual(seen, [6]);
  });

  it('exhausted: the delivered bytes with the counted attempt and a dead_letter block go to <queue>-dlq, then the message is deleted', async () => {
    const q = await raw.fresh('exhaust', { dlq: true });
    const { body, projection } = envelope(URN, { order_id: 3 }, q.name);
    const { app: a, transport: t } = app(q.name, { maxAttempts: 3, deadLetter: true });
    await t.publish({ body, queue: q.name, projection, headers: { traceparent: 'tp-1' } });
    a.handle(URN, () => {
      throw new TypeError('gateway timeout');
    });
    assert.equal(await a.consume({ maxMessages: 3, idleMs: IDLE_MS }), 3);
    await a.close();
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
    const [record] = await raw.drain(q.dlqUrl!);
    const text = record!.Body!;
    const counted = withAttempts(body, 3).toString();
    assert.ok(text.startsWith(counted.slice(0, -1) + ',"dead_letter":{'), 'the envelope verbatim, attempts 3, plus dead_letter');
    const parsed = JSON.parse(text);
    assert.deepEqual(
      { ...parsed.dead_letter, failed_at: 0 },
      { reason: 'failed', error: 'gateway timeout', exception: 'TypeError', failed_at: 0, original_queue: q.name, attempts: 3, lang: 'node' },
    );
    // The record keeps the message's attributes (routing, trace riders).
    assert.equal(record!.MessageAttributes!['bq-job']!.StringValue, URN);
    assert.equal(record!.MessageAttributes!['bq-message-id']!.StringValue, projection.messageId);
    assert.equal(record!.MessageAttributes!.traceparent!.StringValue, 'tp-1');
  });

  it('FIFO: exhausted to <queue>-dlq.fifo, in the message\'s group', async () => {
    const q = await raw.fresh('exhaust-fifo', { fifo: true, dlq: true });
    assert.match(q.dlqName, /-dlq\.fifo$/);
    const { app: a } = app(q.name, { maxAttempts: 1, deadLetter: true });
    assert.equal(a.deadLetterQueueName(), q.dlqName);
    a.handle(URN, () => {
      throw new Error('no');
    });
    await a.publish(URN, { n: 1 }, { key: 'customer-7' });
    assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    await a.close();
    const [record] = await raw.drain(q.dlqUrl!);
    assert.equal(JSON.parse(record!.Body!).dead_letter.reason, 'failed');
    assert.equal(record!.Attributes!.MessageGroupId, 'customer-7');
  });

  it('an explicit DLQ suffix goes before .fifo; an explicit DLQ queue is used as is', async () => {
    const fifo = await raw.fresh('suffix', { fifo: true });
    const errors = await raw.queue(fifo.name.replace(/\.fifo$/, '-errors.fifo'));
    const { app: a } = app(fifo.name, { maxAttempts: 1, deadLetter: { suffix: '-errors' } });
    assert.equal(a.deadLetterQueueName(), fifo.name.replace(/\.fifo$/, '-errors.fifo'));
    a.handle(URN, () => {
      throw new Error('no');
    });
    await a.publish(URN, {});
    await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
    await a.close();
    assert.equal((await raw.drain(errors)).length, 1);

    const std = await raw.fresh('explicit');
    const triage = await raw.fresh('triage');
    const { app: b } = app(std.name, { maxAttempts: 1, deadLetter: { queue: triage.name } });
    b.handle(URN, () => {
      throw new Error('no');
    });
    await b.publish(URN, {});
    await b.consume({ maxMessages: 1, idleMs: IDLE_MS });
    await b.close();
    assert.equal(JSON.parse((await raw.drain(triage.url))[0]!.Body!).dead_letter.original_queue, std.name);
  });

  it('a failed DLQ write deletes nothing: the message comes back when its visibility lapses, and the write is tried again', async () => {
    // No -dlq queue yet: the write fails (QueueNotFoundError) until it is created.
    const q = await raw.fresh('dlq-fail');
    const { body, projection } = envelope(URN, { order_id: 7 }, q.name);
    const first = app(q.name, { maxAttempts: 1, deadLetter: true }, { visibilityTimeoutSeconds: 1 });
    await first.transport.publish({ body, queue: q.name, projection });
    let calls = 0;
    first.app.handle(URN, () => {
      calls += 1;
      throw new Error('always');
    });
    assert.equal(await first.app.consume({ maxMessages: 2, idleMs: IDLE_MS }), 2);
    await first.app.close();
    assert.equal(calls, 2, 'redelivered after the failed write');
    assert.match(first.logger.text(), /dead-letter write failed.*does not exist/);
    const still = await raw.until('the message back', () => raw.peek(q.url, 30, 1), (m) => m !== undefined);
    assert.equal(still!.Body, body.toString(), 'nothing was deleted: the original is still there, unchanged');
    assert.equal(still!.Attributes!.ApproximateReceiveCount, '3');
    await raw.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: still!.ReceiptHandle!, VisibilityTimeout: 0 }));

    const dlqUrl = await raw.queue(q.dlqName);
    const second = app(q.name, { maxAttempts: 1, deadLetter: true });
    second.app.handle(URN, () => {
      throw new Error('always');
    });
    assert.equal(await second.app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    await second.app.close();
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
    const [record] = await raw.drain(dlqUrl);
    assert.equal(JSON.parse(record!.Body!).dead_letter.attempts, 4, 'the counted attempt of the delivery that wrote it');
  });
});
