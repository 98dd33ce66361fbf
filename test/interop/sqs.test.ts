// Interop with the Python SDK (SqsTransport over boto3) on the lab's
// SQS-compatible server (ElasticMQ): the Python SDK's own sqs:// URL on both
// sides, queues created first (neither SDK creates them), DLQ `<queue>-dlq`.
// A retry on SQS is a release on both sides: the body is not rewritten in
// transit, the counted attempt comes from ApproximateReceiveCount (the Python
// SDK reconciles it into the body it hands its handler).
import assert from 'node:assert/strict';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { silentLogger } from '@babelqueue/core';
import { sqsDlqName } from '@babelqueue/core/binding';
import { parseSqsUrl, SqsTransport } from '@babelqueue/sqs';
import { broker } from '../support/brokers.js';
import { describeInterop } from './support/scenarios.js';

// Both SDKs take credentials from the standard AWS chain; any static key works on the lab server.
process.env.AWS_ACCESS_KEY_ID ??= 'babelqueue';
process.env.AWS_SECRET_ACCESS_KEY ??= 'babelqueue';

const lab = broker('sqs');
const client = (url: string) => {
  const { region, endpoint } = parseSqsUrl(url);
  return new SQSClient({ region: region!, endpoint: endpoint! });
};

describeInterop({
  name: 'sqs',
  broker: { skip: lab.skip, url: lab.url === undefined ? undefined : `sqs://us-east-1?endpoint=${lab.url}` },
  transport: (url) => new SqsTransport({ ...parseSqsUrl(url), waitTimeSeconds: 1, logger: silentLogger }),
  dlqName: (queue) => sqsDlqName(queue),
  retryKeepsBody: true,
  async prepare(url, queues) {
    const sqs = client(url);
    try {
      for (const QueueName of queues) await sqs.send(new CreateQueueCommand({ QueueName }));
    } finally {
      sqs.destroy();
    }
  },
  async cleanup(url, queues) {
    const sqs = client(url);
    try {
      for (const QueueName of queues) {
        const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName })).catch(() => ({ QueueUrl: undefined }));
        if (QueueUrl !== undefined) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
      }
    } finally {
      sqs.destroy();
    }
  },
  // The bq- MessageAttributes mirror the body on both sides (String, and Number for the counters).
  native: {
    fromPython(m) {
      assert.equal(m.headers['bq-job'], m.urn);
      assert.equal(m.headers['bq-trace-id'], m.traceId);
      assert.equal(m.headers['bq-message-id'], m.id);
      assert.equal(m.headers['bq-schema-version'], '1');
      assert.equal(m.headers['bq-source-lang'], 'python');
      assert.equal(m.headers['bq-created-at'], String(m.envelope.meta.created_at));
    },
    toPython(headers) {
      assert.equal(headers['bq-schema-version'], '1');
      assert.equal(headers['bq-source-lang'], 'node');
      assert.match(headers['bq-created-at']!, /^\d{13}$/);
      assert.ok(headers['bq-job'] && headers['bq-trace-id'] && headers['bq-message-id'], 'the String contract attributes');
      assert.equal(headers['bq-attempts'], undefined, 'SQS carries no attempts attribute');
    },
  },
});
