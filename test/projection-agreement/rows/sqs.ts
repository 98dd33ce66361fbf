import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import { silentLogger } from '@babelqueue/core';
import { projectSqs, sqsDlqName } from '@babelqueue/core/binding';
import { SqsTransport } from '@babelqueue/sqs';
import { broker, uniqueQueue } from '../../support/brokers.js';
import { until } from '../../support/until.js';
import { bodySays } from '../expected.js';
import type { AgreementLab, AgreementRow, NativeRecord, ProduceOptions } from '../row.js';

const suite = broker('sqs');
const CREDENTIALS = { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' };
const REGION = 'us-east-1';
const CONTRACT = ['bq-job', 'bq-trace-id', 'bq-message-id', 'bq-schema-version', 'bq-source-lang', 'bq-created-at'];

/** An attribute as the client reports it: its data type and value (`Number:1`). */
const typed = (value: MessageAttributeValue) => `${value.DataType}:${value.StringValue}`;

function contractOf(attributes: Record<string, MessageAttributeValue>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(attributes)) if (CONTRACT.includes(name)) out[name] = typed(value);
  return out;
}

function nativeOf(message: Message): NativeRecord {
  const riders: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    if (!CONTRACT.includes(name)) riders[name] = value.StringValue ?? '';
  }
  return { body: Buffer.from(message.Body ?? '', 'utf8'), contract: contractOf(message.MessageAttributes ?? {}), riders };
}

/**
 * SQS writes no retry copy: a retry releases the delivery in place
 * (`ChangeMessageVisibility`), so `readRetry` reads the released message and
 * the row checks that it is the delivery untouched. SQS has no peek: that
 * read is a receive, counted in `ApproximateReceiveCount` like any other.
 */
class SqsLab implements AgreementLab {
  private readonly client = new SQSClient({ endpoint: suite.url!, region: REGION, credentials: CREDENTIALS });
  private readonly urls = new Map<string, string>();

  async queue(prefix: string): Promise<string> {
    const name = uniqueQueue(`bq-agree-${prefix}`);
    for (const queue of [name, sqsDlqName(name)]) {
      const { QueueUrl } = await this.client.send(new CreateQueueCommand({ QueueName: queue }));
      this.urls.set(queue, QueueUrl!);
    }
    return name;
  }

  transport(): SqsTransport {
    return new SqsTransport({ endpoint: suite.url!, region: REGION, credentials: CREDENTIALS, waitTimeSeconds: 1, logger: silentLogger });
  }

  async produce(queue: string, body: Buffer, options: ProduceOptions = {}): Promise<void> {
    const attributes: Record<string, MessageAttributeValue> = projectSqs(bodySays(options.claims ?? body), options.riders);
    if (options.schemaVersion !== undefined) attributes['bq-schema-version'] = { DataType: 'Number', StringValue: options.schemaVersion };
    await this.client.send(new SendMessageCommand({ QueueUrl: this.url(queue), MessageBody: body.toString('utf8'), MessageAttributes: attributes }));
  }

  /** The released message, received and made visible again at once (visibility 0). */
  readRetry(queue: string): Promise<NativeRecord> {
    return this.receive(queue, false);
  }

  readDeadLetter(dlq: string): Promise<NativeRecord> {
    return this.receive(dlq, true);
  }

  project(body: Buffer): Record<string, unknown> {
    return contractOf(projectSqs(bodySays(body)));
  }

  async close(): Promise<void> {
    for (const url of this.urls.values()) await this.client.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined);
    this.client.destroy();
  }

  private url(queue: string): string {
    const url = this.urls.get(queue);
    if (url === undefined) throw new Error(`the lab made no queue "${queue}"`);
    return url;
  }

  private async receive(queue: string, remove: boolean): Promise<NativeRecord> {
    let message: Message | undefined;
    await until(async () => {
      const { Messages = [] } = await this.client.send(new ReceiveMessageCommand({
        QueueUrl: this.url(queue),
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 1,
        VisibilityTimeout: remove ? 30 : 0,
        MessageAttributeNames: ['All'],
      }));
      message = Messages[0];
      return message !== undefined;
    }, 20_000, `a message on ${queue}`);
    if (remove) await this.client.send(new DeleteMessageCommand({ QueueUrl: this.url(queue), ReceiptHandle: message!.ReceiptHandle! }));
    return nativeOf(message!);
  }
}

export const row: AgreementRow = {
  binding: 'sqs',
  skip: suite.skip,
  // No attempts attribute (FACTS §4): ApproximateReceiveCount counts instead.
  fields: { schemaVersion: 'bq-schema-version' },
  versionGate: true,
  poisonRetry: false,
  ridersOnDeadLetter: true,
  retryInPlace: 'SQS releases the message with ChangeMessageVisibility; nothing is re-sent',
  open: async () => new SqsLab(),
};
