// Smoke: the lab's SQS-compatible server does what the SQS binding relies on:
// message attributes, ChangeMessageVisibility, ApproximateReceiveCount and
// FIFO queues (group ordering, deduplication ids), through @aws-sdk/client-sqs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { broker, uniqueQueue } from '../support/brokers.js';

const b = broker('sqs');

describe('smoke: sqs', { skip: b.skip }, () => {
  let sqs: SQSClient;
  const created: string[] = [];
  before(() => {
    sqs = new SQSClient({
      endpoint: b.url!,
      region: 'us-east-1',
      credentials: { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' },
    });
  });
  after(async () => {
    for (const QueueUrl of created) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    sqs.destroy();
  });

  async function queue(name: string, attributes: Record<string, string> = {}): Promise<string> {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    created.push(QueueUrl!);
    return QueueUrl!;
  }

  const receive = (QueueUrl: string) =>
    sqs.send(new ReceiveMessageCommand({
      QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2,
      MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['ApproximateReceiveCount'],
    }));

  it('round-trips a body with attributes; a released message comes back with its receive count raised', async () => {
    const QueueUrl = await queue(uniqueQueue('smoke-sqs'));
    const body = '{"job":"urn:babel:smoke:ping","data":{"s":"é"}}';
    await sqs.send(new SendMessageCommand({
      QueueUrl, MessageBody: body,
      MessageAttributes: { 'bq-urn': { DataType: 'String', StringValue: 'urn:babel:smoke:ping' } },
    }));
    const first = (await receive(QueueUrl)).Messages ?? [];
    assert.equal(first.length, 1);
    assert.equal(first[0]!.Body, body);
    assert.equal(first[0]!.MessageAttributes?.['bq-urn']?.StringValue, 'urn:babel:smoke:ping');
    assert.equal(first[0]!.Attributes?.ApproximateReceiveCount, '1');

    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle: first[0]!.ReceiptHandle!, VisibilityTimeout: 0 }));
    const second = (await receive(QueueUrl)).Messages ?? [];
    assert.equal(second.length, 1);
    assert.equal(second[0]!.Attributes?.ApproximateReceiveCount, '2');
    await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: second[0]!.ReceiptHandle! }));
  });

  it('keeps FIFO order within a message group and drops a duplicate deduplication id', async () => {
    const QueueUrl = await queue(`${uniqueQueue('smoke-sqs')}.fifo`, { FifoQueue: 'true' });
    for (const [i, dedup] of [[1, 'a'], [2, 'b'], [2, 'b'], [3, 'c']] as const) {
      await sqs.send(new SendMessageCommand({
        QueueUrl, MessageBody: `{"n":${i}}`, MessageGroupId: 'g1', MessageDeduplicationId: dedup,
      }));
    }
    const got: string[] = [];
    while (got.length < 3) {
      const { Messages = [] } = await receive(QueueUrl);
      assert.ok(Messages.length > 0, `only ${got.length} of 3 messages arrived`);
      for (const m of Messages) {
        got.push(m.Body!);
        await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle! }));
      }
    }
    assert.deepEqual(got, ['{"n":1}', '{"n":2}', '{"n":3}']);
  });
});
