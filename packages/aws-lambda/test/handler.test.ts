// The handler's own rules with synthetic events (no broker call is made: no
// record is dead-lettered and releases are off): FIFO stops at the first
// failure, the handler timeout follows the function's remaining time, and the
// options and the App's binding are checked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError, createApp, EnvelopeCodec, InMemoryTransport, type JsonObject, type Message } from '@babelqueue/core';
import { queueOfArn, sqsHandler } from '@babelqueue/aws-lambda';
import { SqsTransport } from '@babelqueue/sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { captureLogger } from '../../../test/support/capture-logger.js';

const URN = 'urn:babel:orders:created';

/** An SqsTransport that is never called (an unreachable endpoint). */
function idleTransport() {
  return new SqsTransport({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, logger: captureLogger() });
}

function record(n: number, queue: string, data: JsonObject = { n }): SQSRecord {
  const body = EnvelopeCodec.encode(EnvelopeCodec.make(URN, data, { queue }));
  return {
    messageId: `m-${n}`,
    receiptHandle: `r-${n}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1700000000000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1700000000001',
      ...(queue.endsWith('.fifo') ? { MessageGroupId: 'g', MessageDeduplicationId: `d-${n}`, SequenceNumber: String(n) } : {}),
    },
    messageAttributes: { 'bq-schema-version': { stringValue: '1', stringListValues: [], binaryListValues: [], dataType: 'Number' } },
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${queue}`,
    awsRegion: 'us-east-1',
  };
}

function setup(appOptions: { handlerTimeoutMs?: number } = {}) {
  const transport = idleTransport();
  const app = createApp({ transport, logger: captureLogger(), ...appOptions });
  const seen: number[] = [];
  const signals: AbortSignal[] = [];
  return { app, transport, seen, signals };
}

const failures = (response: { batchItemFailures: { itemIdentifier: string }[] }) => response.batchItemFailures.map((f) => f.itemIdentifier);

describe('sqsHandler', () => {
  it('a FIFO batch stops at the first failure and reports it and every record after it, unbegun', async () => {
    const { app, transport, seen } = setup();
    app.handle<{ n: number }>(URN, (data) => {
      seen.push(data.n);
      if (data.n === 2) throw new Error('refused');
    });
    const handler = sqsHandler(app, { releaseRetries: false, logger: captureLogger() });
    const event: SQSEvent = { Records: [1, 2, 3, 4].map((n) => record(n, 'orders.fifo')) };
    assert.deepEqual(failures(await handler(event)), ['m-2', 'm-3', 'm-4']);
    assert.deepEqual(seen, [1, 2]);
    await transport.close();
  });

  it('a standard batch goes on past a failure and reports only it', async () => {
    const { app, transport, seen } = setup();
    app.handle<{ n: number }>(URN, (data) => {
      seen.push(data.n);
      if (data.n === 2) throw new Error('refused');
    });
    const handler = sqsHandler(app, { releaseRetries: false, concurrency: 2, logger: captureLogger() });
    const event: SQSEvent = { Records: [1, 2, 3, 4].map((n) => record(n, 'orders')) };
    assert.deepEqual(failures(await handler(event)), ['m-2']);
    assert.deepEqual(seen.sort(), [1, 2, 3, 4]);
    await transport.close();
  });

  it('a handler times out before the function does: remaining time less the margin; it is failed and its signal aborted', async () => {
    const { app, transport, signals } = setup();
    app.handle(URN, (_data, message: Message) => {
      signals.push(message.signal);
      return new Promise(() => {}); // never settles
    });
    const handler = sqsHandler(app, { releaseRetries: false, timeoutMarginMs: 1000, logger: captureLogger() });
    const remaining = 1_150;
    const started = Date.now();
    const response = await handler({ Records: [record(1, 'orders')] }, { getRemainingTimeInMillis: () => remaining - (Date.now() - started) });
    assert.deepEqual(failures(response), ['m-1']);
    assert.equal(signals.length, 1);
    assert.equal(signals[0]!.aborted, true);
    await transport.close();
  });

  it('the App\'s handlerTimeoutMs applies when it is the lower one', async () => {
    const { app, transport } = setup({ handlerTimeoutMs: 50 });
    app.handle(URN, () => new Promise(() => {}));
    const handler = sqsHandler(app, { releaseRetries: false, logger: captureLogger() });
    const response = await handler({ Records: [record(1, 'orders')] }, { getRemainingTimeInMillis: () => 600_000 });
    assert.deepEqual(failures(response), ['m-1']);
    await transport.close();
  });

  it('a record that would start inside the margin is not begun and is reported', async () => {
    const { app, transport, seen } = setup();
    app.handle<{ n: number }>(URN, (data) => void seen.push(data.n));
    const logger = captureLogger();
    const handler = sqsHandler(app, { releaseRetries: false, timeoutMarginMs: 1000, logger });
    const response = await handler({ Records: [record(1, 'orders'), record(2, 'orders')] }, { getRemainingTimeInMillis: () => 900 });
    assert.deepEqual(failures(response), ['m-1', 'm-2']);
    assert.deepEqual(seen, []);
    assert.ok(logger.lines.some((l) => /not begun/.test(l.message)), 'a line says why the records were not begun');
    await transport.close();
  });

  it('a record without an SQS queue ARN is reported', async () => {
    const { app, transport, seen } = setup();
    app.handle<{ n: number }>(URN, (data) => void seen.push(data.n));
    const handler = sqsHandler(app, { releaseRetries: false, logger: captureLogger() });
    const response = await handler({ Records: [{ ...record(1, 'orders'), eventSourceARN: 'nope' }] });
    assert.deepEqual(failures(response), ['m-1']);
    assert.deepEqual(seen, []);
    await transport.close();
  });

  it('refuses an App on another binding and bad options', () => {
    const memory = createApp({ transport: new InMemoryTransport(), logger: captureLogger() });
    assert.throws(() => sqsHandler(memory), ConfigurationError);
    const { app } = setup();
    assert.throws(() => sqsHandler(app, { concurrency: 0 }), ConfigurationError);
    assert.throws(() => sqsHandler(app, { timeoutMarginMs: -1 }), ConfigurationError);
    assert.throws(() => sqsHandler(app, { batchSize: 10 } as never), ConfigurationError);
  });

  it('queueOfArn reads the queue name from an SQS ARN', () => {
    assert.equal(queueOfArn('arn:aws:sqs:us-east-1:123456789012:orders'), 'orders');
    assert.equal(queueOfArn('arn:aws:sqs:eu-west-1:123456789012:orders.fifo'), 'orders.fifo');
    assert.equal(queueOfArn('arn:aws:sns:us-east-1:123456789012:orders'), undefined);
    assert.equal(queueOfArn(undefined), undefined);
  });
});
