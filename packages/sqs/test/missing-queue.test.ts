// A running consumer whose queue answers QueueDoesNotExist: ElasticMQ does so
// for a moment after a restart, between answering HTTP and restoring its queues
// from its file. The lab's server is shared, so the moment is made here by
// deleting the queue and creating it again (ElasticMQ gives it the same URL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CreateQueueCommand, DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { ConfigurationError, createApp } from '@babelqueue/core';
import { SqsTransport } from '@babelqueue/sqs';
import { until } from '../../../test/support/until.js';
import { CREDENTIALS, Raw, REGION, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
const MISSING = /the queue answers that it does not exist; polling it again/;

describe('SQS missingQueueGraceMs (options)', () => {
  it('refuses a negative or fractional grace', () => {
    const base = { endpoint: 'http://127.0.0.1:1', region: REGION, credentials: CREDENTIALS };
    assert.throws(() => new SqsTransport({ ...base, missingQueueGraceMs: -1 }), ConfigurationError);
    assert.throws(() => new SqsTransport({ ...base, missingQueueGraceMs: 1.5 }), ConfigurationError);
    assert.doesNotThrow(() => new SqsTransport({ ...base, missingQueueGraceMs: 0 }), '0: fail at the first such answer');
  });
});

describe('SQS: a queue that answers QueueDoesNotExist while consuming', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  it('within missingQueueGraceMs (a server restoring its queues): the consumer polls on, warns, and handles what comes after', async () => {
    const { name, url } = await raw.fresh('missing-back');
    const { transport: t, logger } = transport({ waitTimeSeconds: 0 });
    const app = createApp({ transport: t, queue: name, logger });
    const seen: number[] = [];
    app.handle(URN, (data: { n: number }) => void seen.push(data.n));
    const stop = new AbortController();
    const running = app.run({ signal: stop.signal, handleSignals: false });
    try {
      await until(() => /consuming/.test(logger.text()), 30_000, 'the worker to start consuming');
      await raw.client.send(new DeleteQueueCommand({ QueueUrl: url }));
      await until(() => MISSING.test(logger.text()), 30_000, 'a receive told the queue does not exist');
      await raw.client.send(new CreateQueueCommand({ QueueName: name }));
      await app.publish(URN, { n: 1 });
      await until(() => seen.length === 1, 30_000, 'the message published after the queue came back');
    } finally {
      stop.abort();
      await running;
      await app.close();
    }
    assert.deepEqual(seen, [1]);
    assert.doesNotMatch(logger.text(), /worker run failed|"level":"error"/, 'nothing failed');
  });

  it('past missingQueueGraceMs (a queue deleted for good): the consumer fails with QueueDoesNotExist', async () => {
    const { name, url } = await raw.fresh('missing-gone');
    const { transport: t, logger } = transport({ waitTimeSeconds: 0, missingQueueGraceMs: 500 });
    const app = createApp({ transport: t, queue: name, logger });
    app.handle(URN, () => undefined);
    const stop = new AbortController();
    const running = app.run({ signal: stop.signal, handleSignals: false });
    let missingFrom = 0;
    try {
      await until(() => /consuming/.test(logger.text()), 30_000, 'the worker to start consuming');
      await raw.client.send(new DeleteQueueCommand({ QueueUrl: url }));
      missingFrom = Date.now();
      await assert.rejects(running, (error: Error) => error.name === 'QueueDoesNotExist' || /NonExistentQueue/.test(error.name));
    } finally {
      stop.abort();
      await running.catch(() => undefined);
      await app.close();
    }
    assert.ok(Date.now() - missingFrom >= 500, 'the consumer polled on for its grace before failing');
    assert.match(logger.text(), MISSING, 'each answer within the grace was a warning');
  });
});
