import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeleteQueueCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { createApp } from '@babelqueue/core';
import { parseSqsUrl, QueueNotFoundError, transportFromUrl } from '@babelqueue/sqs';
import { captureLogger, CREDENTIALS, Raw, sqs, sqsUrl, transport, uniqueQueue } from './support/sqs.js';

const URN = 'urn:babel:orders:created';

/**
 * The first hour on SQS: a missing queue must fail the start, before the
 * worker says it consumes, with advice the user can follow from a URL.
 */
describe('SQS start-up: a missing queue', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  it('run() and consume() fail with QueueNotFoundError before "consuming" is logged; the error names the URL option', async () => {
    const queue = uniqueQueue('bq-sqs-missing');
    const { transport: t, logger } = transport();
    const app = createApp({ transport: t, queue, logger });
    app.handle(URN, () => undefined);
    await assert.rejects(app.run({ signal: new AbortController().signal }), (e: unknown) =>
      e instanceof QueueNotFoundError && /createQueues: true/.test(e.message) && /create_queues=1/.test(e.message));
    assert.doesNotMatch(logger.text(), /consuming /, 'the worker never said it was consuming');

    const { transport: t2, logger: logger2 } = transport();
    const drain = createApp({ transport: t2, queue, logger: logger2 });
    drain.handle(URN, () => undefined);
    await assert.rejects(drain.consume({ idleMs: 1000 }), { name: 'QueueNotFoundError' });
    await drain.close();
    assert.doesNotMatch(logger2.text(), /consuming /);
  });

  it('sqs://…?create_queues=1 creates the queue (and reads as createQueues: true)', async () => {
    assert.equal(parseSqsUrl('sqs://us-east-1?create_queues=1').createQueues, true);
    assert.equal(parseSqsUrl('sqs://us-east-1?create_queues=0').createQueues, false);
    const queue = uniqueQueue('bq-sqs-create');
    const logger = captureLogger();
    const t = transportFromUrl(sqsUrl('&wait_time=1&create_queues=1'), { credentials: CREDENTIALS, logger });
    const app = createApp({ transport: t, queue, logger });
    const seen: number[] = [];
    app.handle<{ n: number }>(URN, (data) => void seen.push(data.n));
    try {
      await app.publish(URN, { n: 1 });
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 15_000 }), 1);
      assert.deepEqual(seen, [1]);
      assert.match(logger.text(), /created SQS queue/);
    } finally {
      await app.close();
      const { QueueUrl } = await raw.client.send(new GetQueueUrlCommand({ QueueName: queue })).catch(() => ({ QueueUrl: undefined }));
      if (QueueUrl !== undefined) await raw.client.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
    }
  });
});
