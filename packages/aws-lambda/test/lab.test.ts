// The handler on the lab's ElasticMQ, fed as an event source mapping feeds a
// function: messages published by our App and by the Python SDK are received
// with ReceiveMessage, shaped as the SQSEvent (support/lab.ts), passed to the
// handler, and its response applied as Lambda applies it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { createApp, type Message } from '@babelqueue/core';
import { sqsHandler } from '@babelqueue/aws-lambda';
import { pythonPeer } from '../../../test/interop/support/python-peer.js';
import { captureLogger, labTransport, Mapping, sqs, sqsUrl } from './support/lab.js';

// The Python SDK takes credentials from the standard AWS chain; any static key works on the lab server.
process.env.AWS_ACCESS_KEY_ID ??= 'babelqueue';
process.env.AWS_SECRET_ACCESS_KEY ??= 'babelqueue';

const URN = 'urn:babel:orders:created';
const python = pythonPeer('aws-lambda');

interface Seen {
  n: number;
  attempt: number;
  lang: unknown;
}

function appOn(options: { maxAttempts?: number } = {}) {
  const { transport } = labTransport();
  const logger = captureLogger();
  const app = createApp({ transport, logger, deadLetter: true, maxAttempts: options.maxAttempts ?? 3 });
  const seen: Seen[] = [];
  app.handle<{ n: number; fail?: boolean }>(URN, (data, message: Message) => {
    seen.push({ n: data.n, attempt: message.attempts, lang: message.envelope.meta.lang });
    if (data.fail === true) throw new Error(`order ${data.n} refused`);
  });
  return { app, transport, logger, seen };
}

const json = (text: string | undefined) => JSON.parse(text ?? 'null') as Record<string, any>;

describe('sqsHandler on the lab ElasticMQ', { skip: sqs.skip }, () => {
  const mapping = new Mapping();
  after(() => mapping.close());

  it('a batch of 10 (App and Python producers) with one poison and one failing message: only the failing one is retried, the poison is on the DLQ', { skip: python.skip }, async () => {
    const q = await mapping.queues('batch');
    const { app, transport, seen } = appOn();
    try {
      const handler = sqsHandler(app, { logger: captureLogger() });
      // 6 from our App (one of which fails), 3 from the Python SDK, 1 poison.
      for (let n = 1; n <= 6; n++) await app.publish(URN, n === 4 ? { n, fail: true } : { n }, { queue: q.name });
      for (let n = 7; n <= 9; n++) {
        await python.run(['publish', '--url', sqsUrl(), '--queue', q.name, '--urn', URN, '--data', JSON.stringify({ n })]);
      }
      await mapping.client.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: '{"job": "not an envelope' }));

      const event = await mapping.event(q, 10);
      assert.equal(event.Records.length, 10);
      const response = await handler(event, { getRemainingTimeInMillis: () => 60_000 });
      const failing = event.Records.find((r) => json(r.body).data?.fail === true)!;
      assert.deepEqual(response, { batchItemFailures: [{ itemIdentifier: failing.messageId }] });
      await mapping.apply(q.url, event, response);

      assert.deepEqual(seen.map((s) => s.n).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
      assert.deepEqual(seen.filter((s) => s.n >= 7).map((s) => s.lang), ['python', 'python', 'python']);
      assert.ok(seen.every((s) => s.attempt === 1), 'every message on its first attempt');

      // The poison record is on <queue>-dlq (written before its record counted as a success).
      const [poison] = await mapping.receive(q.dlqUrl, 1);
      const record = json(poison!.Body);
      assert.equal(record.dead_letter.reason, 'poison');
      assert.equal(record.dead_letter.original_queue, q.name);
      assert.equal(record.raw, '{"job": "not an envelope', 'the poison bytes, kept');
      await mapping.remove(q.dlqUrl, [poison!]);

      // Only the failing message is redelivered (released at once: the App's backoff is 0), as attempt 2.
      const again = await mapping.event(q, 1);
      assert.equal(again.Records[0]!.messageId, failing.messageId);
      assert.equal(again.Records[0]!.attributes.ApproximateReceiveCount, '2');
      const second = await handler(again, { getRemainingTimeInMillis: () => 60_000 });
      assert.deepEqual(second, { batchItemFailures: [{ itemIdentifier: failing.messageId }] });
      await mapping.apply(q.url, again, second);
      assert.deepEqual(seen.at(-1), { n: 4, attempt: 2, lang: 'node' });

      // Its last attempt dead-letters it: a success for Lambda, the record on the DLQ with the body's bytes.
      const last = await mapping.event(q, 1);
      const third = await handler(last, { getRemainingTimeInMillis: () => 60_000 });
      assert.deepEqual(third, { batchItemFailures: [] });
      await mapping.apply(q.url, last, third);
      assert.deepEqual(seen.at(-1), { n: 4, attempt: 3, lang: 'node' });
      const [failed] = await mapping.receive(q.dlqUrl, 1);
      const failedRecord = json(failed!.Body);
      assert.equal(failedRecord.dead_letter.reason, 'failed');
      assert.equal(failedRecord.dead_letter.attempts, 3);
      assert.equal(failedRecord.data.n, 4);
      assert.equal(failed!.MessageAttributes?.['bq-job']?.StringValue, URN, 'the DLQ record carries the SQS projection');
      assert.equal(await mapping.depth(q.url), 0, 'nothing left on the work queue');
    } finally {
      await transport.close();
    }
  });

  it('a FIFO batch stops at the first failure: it and the records after it are retried, in order', async () => {
    const q = await mapping.queues('fifo', true);
    const { app, transport, seen } = appOn();
    try {
      const handler = sqsHandler(app, { logger: captureLogger() });
      for (const data of [{ n: 1 }, { n: 2, fail: true }, { n: 3 }]) await app.publish(URN, data, { queue: q.name, key: Buffer.from('g') });
      const event = await mapping.event(q, 3);
      assert.deepEqual(event.Records.map((r) => json(r.body).data.n), [1, 2, 3]);
      const response = await handler(event, { getRemainingTimeInMillis: () => 60_000 });
      assert.deepEqual(response.batchItemFailures.map((f) => f.itemIdentifier), [event.Records[1]!.messageId, event.Records[2]!.messageId]);
      assert.deepEqual(seen.map((s) => s.n), [1, 2], 'the record after the failure was not begun');
      await mapping.apply(q.url, event, response);

      const again = await mapping.event(q, 2);
      assert.deepEqual(again.Records.map((r) => json(r.body).data.n), [2, 3], 'redelivered in order');
    } finally {
      await transport.close();
    }
  });

  it('a version-gated message (bq-schema-version 2) goes to the DLQ as it came, without the gating attribute', async () => {
    const q = await mapping.queues('gate');
    const { app, transport, seen } = appOn();
    try {
      const handler = sqsHandler(app, { logger: captureLogger() });
      const body = '{"job":"urn:babel:orders:created","data":{"n":1},"future":true}';
      await mapping.client.send(new SendMessageCommand({
        QueueUrl: q.url,
        MessageBody: body,
        MessageAttributes: {
          'bq-schema-version': { DataType: 'Number', StringValue: '2' },
          traceparent: { DataType: 'String', StringValue: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
        },
      }));
      const event = await mapping.event(q, 1);
      const response = await handler(event, { getRemainingTimeInMillis: () => 60_000 });
      assert.deepEqual(response, { batchItemFailures: [] });
      assert.deepEqual(seen, [], 'the handler never saw it');
      const [gated] = await mapping.receive(q.dlqUrl, 1);
      assert.equal(gated!.Body, body, 'byte for byte');
      assert.equal(gated!.MessageAttributes?.['bq-schema-version'], undefined);
      assert.equal(gated!.MessageAttributes?.traceparent?.StringValue, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    } finally {
      await transport.close();
    }
  });

  it('a dead-letter write that fails leaves the record reported as failed, not deleted', async () => {
    const q = await mapping.queues('dlq-missing');
    await mapping.dropQueue(q.dlqUrl);
    const { app, transport } = appOn();
    try {
      const handler = sqsHandler(app, { logger: captureLogger() });
      await mapping.client.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'poison' }));
      const event = await mapping.event(q, 1);
      const response = await handler(event, { getRemainingTimeInMillis: () => 60_000 });
      assert.deepEqual(response, { batchItemFailures: [{ itemIdentifier: event.Records[0]!.messageId }] });
    } finally {
      await transport.close();
    }
  });
});
