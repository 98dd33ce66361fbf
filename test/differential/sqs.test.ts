// Differential conformance over SQS (the lab's ElasticMQ): queues created
// first (neither SDK creates them), DLQ `<queue>-dlq`, the native schema
// version in the `bq-schema-version` String attribute. The rows are sent and
// read back with the AWS SDK (our binding has no raw publish or scan: SQS cannot
// read without receiving). A receive that is not deleted is released, so the
// DLQ is read after the consumer stopped and the queue's depth counts the
// in-flight copies too.
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { silentLogger } from '@babelqueue/core';
import { sqsDlqName } from '@babelqueue/core/binding';
import { parseSqsUrl, SqsTransport } from '@babelqueue/sqs';
import { broker } from '../support/brokers.js';
import { describeDifferential } from './support/driver.js';

// Both SDKs take credentials from the standard AWS chain; any static key works on the lab server.
process.env.AWS_ACCESS_KEY_ID ??= 'babelqueue';
process.env.AWS_SECRET_ACCESS_KEY ??= 'babelqueue';

const lab = broker('sqs');
const client = (url: string) => {
  const { region, endpoint } = parseSqsUrl(url);
  return new SQSClient({ region: region!, endpoint: endpoint! });
};

async function queueUrl(sqs: SQSClient, QueueName: string): Promise<string> {
  return (await sqs.send(new GetQueueUrlCommand({ QueueName }))).QueueUrl!;
}

const BODY_LIMIT = 'SQS carries a message body as Unicode text: bytes that are not valid UTF-8 cannot be sent';
const EMPTY_ATTRIBUTE = 'SQS refuses a message attribute with an empty value';

describeDifferential({
  name: 'sqs',
  broker: { skip: lab.skip, url: lab.url === undefined ? undefined : `sqs://us-east-1?endpoint=${lab.url}` },
  transport: (url) => new SqsTransport({ ...parseSqsUrl(url), waitTimeSeconds: 1, logger: silentLogger }),
  versionKey: 'bq-schema-version',
  unsupported: {
    'poison-invalid-utf8-dl-on': BODY_LIMIT,
    'poison-invalid-utf8-dl-off': BODY_LIMIT,
    'version-empty-dl-on': EMPTY_ATTRIBUTE,
    'version-empty-dl-off': EMPTY_ATTRIBUTE,
  },
  dlqName: (queue, suffix) => sqsDlqName(queue, suffix === undefined ? {} : { suffix }),
  async prepare(url, queues) {
    const sqs = client(url);
    try {
      for (const QueueName of queues) await sqs.send(new CreateQueueCommand({ QueueName }));
    } finally {
      sqs.destroy();
    }
  },
  async publish(url, queue, body, headers) {
    const sqs = client(url);
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: await queueUrl(sqs, queue),
          MessageBody: body.toString('utf8'),
          MessageAttributes: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, { DataType: 'String', StringValue: v }])),
        }),
      );
    } finally {
      sqs.destroy();
    }
  },
  async inspect(url, queue, dlq) {
    const sqs = client(url);
    try {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: await queueUrl(sqs, queue),
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      const left =
        Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0) +
        Number(Attributes?.ApproximateNumberOfMessagesDelayed ?? 0);
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: await queueUrl(sqs, dlq), MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], WaitTimeSeconds: 1, VisibilityTimeout: 60 }),
      );
      const records = (Messages ?? []).map((m) => ({
        body: Buffer.from(m.Body ?? '', 'utf8'),
        headers: Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? null])),
      }));
      return { left, dlq: records };
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
});
