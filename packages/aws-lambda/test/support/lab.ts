/**
 * The lab's ElasticMQ as an AWS Lambda event source mapping sees it: messages
 * are received with a real ReceiveMessage and shaped into the SQSEvent Lambda
 * hands a function; the function's SQSBatchResponse is applied as Lambda
 * applies it (the records not reported are deleted, the reported ones left).
 *
 * The shape followed (AWS Lambda developer guide, "Using Lambda with Amazon
 * SQS", the example standard and FIFO events; @types/aws-lambda's SQSRecord):
 *
 *   { Records: [{
 *       messageId, receiptHandle, body,                      // as received
 *       attributes: { ApproximateReceiveCount, SentTimestamp, SenderId,
 *                     ApproximateFirstReceiveTimestamp,       // strings
 *                     SequenceNumber, MessageGroupId, MessageDeduplicationId }, // FIFO only
 *       messageAttributes: { <name>: { stringValue?, binaryValue? (base64),
 *                                      stringListValues: [], binaryListValues: [], dataType } },
 *       md5OfBody, md5OfMessageAttributes?, eventSource: 'aws:sqs',
 *       eventSourceARN: <the queue's QueueArn>, awsRegion }] }
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { SqsTransport } from '@babelqueue/sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';
import { captureLogger } from '../../../../test/support/capture-logger.js';

export { captureLogger, uniqueQueue };

export const sqs = broker('sqs');
export const CREDENTIALS = { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' };
export const REGION = 'us-east-1';

/** The lab server as an `sqs://` URL, the Python SDK's spelling. */
export function sqsUrl(): string {
  return `sqs://${REGION}?endpoint=${sqs.url}`;
}

/** An SqsTransport on the lab server, as a function would build one. */
export function labTransport() {
  const logger = captureLogger();
  return { transport: new SqsTransport({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS, logger }), logger };
}

const SYSTEM_ATTRIBUTES = [
  'ApproximateReceiveCount', 'SentTimestamp', 'SenderId', 'ApproximateFirstReceiveTimestamp',
  'SequenceNumber', 'MessageGroupId', 'MessageDeduplicationId', 'AWSTraceHeader',
] as const;

/** The lab as the event source mapping sees it: queues, receives shaped as events, responses applied. */
export class Mapping {
  readonly client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
  private readonly created: string[] = [];

  /** A fresh queue (FIFO when asked) and its `-dlq`: URL, name, ARN. */
  async queues(prefix: string, fifo = false) {
    const base = uniqueQueue(`bq-lambda-${prefix}`);
    const name = fifo ? `${base}.fifo` : base;
    const dlqName = fifo ? `${base}-dlq.fifo` : `${base}-dlq`;
    const url = await this.create(name, fifo);
    const dlqUrl = await this.create(dlqName, fifo);
    const { Attributes } = await this.client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    return { name, url, arn: Attributes!.QueueArn!, dlqName, dlqUrl };
  }

  private async create(name: string, fifo: boolean): Promise<string> {
    const { QueueUrl } = await this.client.send(new CreateQueueCommand({
      QueueName: name,
      Attributes: fifo ? { FifoQueue: 'true', VisibilityTimeout: '30' } : { VisibilityTimeout: '30' },
    }));
    this.created.push(QueueUrl!);
    return QueueUrl!;
  }

  /** Receives until `count` messages are in hand (ten at most per call), as the mapping's poller does. */
  async receive(url: string, count: number, deadlineMs = 20_000): Promise<Message[]> {
    const got: Message[] = [];
    const end = Date.now() + deadlineMs;
    while (got.length < count) {
      if (Date.now() > end) throw new Error(`received ${got.length} of ${count} messages before the deadline`);
      const { Messages } = await this.client.send(new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: Math.min(10, count - got.length),
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }));
      got.push(...(Messages ?? []));
    }
    return got;
  }

  /** Receives `count` messages and shapes them as the event Lambda would invoke the function with. */
  async event(queue: { url: string; arn: string }, count: number): Promise<SQSEvent> {
    return toEvent(await this.receive(queue.url, count), queue.arn);
  }

  /** Applies the function's response as Lambda does: deletes the records it did not report; the reported ones stay (and reappear after their visibility timeout). */
  async apply(url: string, event: SQSEvent, response: SQSBatchResponse): Promise<void> {
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const done = event.Records.filter((r) => !failed.has(r.messageId));
    for (let i = 0; i < done.length; i += 10) {
      const { Failed } = await this.client.send(new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: done.slice(i, i + 10).map((r, k) => ({ Id: String(k), ReceiptHandle: r.receiptHandle })),
      }));
      if (Failed !== undefined && Failed.length > 0) throw new Error(`delete failed: ${JSON.stringify(Failed)}`);
    }
  }

  /** Deletes messages received from `url` (a test done reading them). */
  async remove(url: string, messages: readonly Message[]): Promise<void> {
    for (const m of messages) await this.client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
  }

  /** Visible, in-flight and delayed messages of a queue. */
  async depth(url: string): Promise<number> {
    const { Attributes } = await this.client.send(new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }));
    return Number(Attributes?.ApproximateNumberOfMessages ?? 0) + Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
      + Number(Attributes?.ApproximateNumberOfMessagesDelayed ?? 0);
  }

  /** Deletes a queue now (a test that needs one missing). */
  async dropQueue(url: string): Promise<void> {
    await this.client.send(new DeleteQueueCommand({ QueueUrl: url }));
  }

  async close(): Promise<void> {
    for (const QueueUrl of this.created) await this.client.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
    this.client.destroy();
  }
}

/** ReceiveMessage's messages as the event source mapping's SQSEvent. */
export function toEvent(messages: readonly Message[], arn: string): SQSEvent {
  const region = arn.split(':')[3] ?? REGION;
  return { Records: messages.map((m) => toRecord(m, arn, region)) };
}

function toRecord(m: Message, arn: string, region: string): SQSRecord {
  const attributes: Record<string, string> = {};
  for (const name of SYSTEM_ATTRIBUTES) {
    const value = m.Attributes?.[name];
    if (value !== undefined) attributes[name] = value;
  }
  const messageAttributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(m.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
      stringListValues: [],
      binaryListValues: [],
      dataType: value.DataType as SQSMessageAttributes[string]['dataType'],
    };
  }
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: attributes as unknown as SQSRecordAttributes,
    messageAttributes,
    md5OfBody: m.MD5OfBody ?? '',
    ...(m.MD5OfMessageAttributes !== undefined ? { md5OfMessageAttributes: m.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: region,
  };
}
