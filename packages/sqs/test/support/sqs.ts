import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import { EnvelopeCodec, type JsonObject } from '@babelqueue/core';
import { type EnvelopeProjection } from '@babelqueue/core/binding';
import { SqsTransport, type SqsTransportOptions } from '@babelqueue/sqs';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';
import { captureLogger } from '../../../../test/support/capture-logger.js';

export { captureLogger, uniqueQueue };

/** The SQS suite: `sqs.url` is the lab server's endpoint, `sqs.skip` goes to `describe`. */
export const sqs = broker('sqs');

/** Any static key works on ElasticMQ; tests set them explicitly instead of relying on the AWS chain. */
export const CREDENTIALS = { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' };
export const REGION = 'us-east-1';

/** The lab server as an `sqs://` URL, the Python SDK's spelling. */
export function sqsUrl(extra = ''): string {
  return `sqs://${REGION}?endpoint=${sqs.url}${extra}`;
}

/** A transport on the lab server with test credentials and a capture logger. */
export function transport(options: SqsTransportOptions = {}) {
  const logger = captureLogger();
  const t = new SqsTransport({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS, logger, waitTimeSeconds: 1, ...options });
  return { transport: t, logger };
}

/** A plain @aws-sdk/client-sqs client, for setting queues up and reading what the binding wrote, as another SDK would. */
export class Raw {
  readonly client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
  private readonly created = new Set<string>();

  /** Creates a queue (FIFO when the name ends in .fifo); removed by `close()`. */
  async queue(name: string, attributes: Record<string, string> = {}): Promise<string> {
    const fifo = name.endsWith('.fifo') ? { FifoQueue: 'true' } : {};
    const { QueueUrl } = await this.client.send(new CreateQueueCommand({ QueueName: name, Attributes: { ...fifo, ...attributes } }));
    this.created.add(QueueUrl!);
    return QueueUrl!;
  }

  /** A fresh queue name and its URL; its `-dlq` too when asked. */
  async fresh(prefix: string, options: { fifo?: boolean; dlq?: boolean; attributes?: Record<string, string> } = {}) {
    const base = uniqueQueue(`bq-sqs-${prefix}`);
    const name = options.fifo ? `${base}.fifo` : base;
    const url = await this.queue(name, options.attributes);
    const dlqName = options.fifo ? `${base}-dlq.fifo` : `${base}-dlq`;
    const dlqUrl = options.dlq ? await this.queue(dlqName) : undefined;
    return { name, url, dlqName, dlqUrl };
  }

  /** A queue with a RedrivePolicy to a native dead-letter queue of its own. */
  async withRedrive(prefix: string, maxReceiveCount: number) {
    const native = await this.fresh(`${prefix}-native`);
    const { Attributes } = await this.client.send(new GetQueueAttributesCommand({ QueueUrl: native.url, AttributeNames: ['QueueArn'] }));
    const work = await this.fresh(prefix, {
      attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount }) },
    });
    return { ...work, nativeUrl: native.url };
  }

  /** Sends a raw body as a foreign producer would. */
  async send(url: string, body: string, attributes: Record<string, MessageAttributeValue> = {}, extra: { MessageGroupId?: string; MessageDeduplicationId?: string } = {}) {
    await this.client.send(new SendMessageCommand({
      QueueUrl: url,
      MessageBody: body,
      ...(Object.keys(attributes).length > 0 ? { MessageAttributes: attributes } : {}),
      ...extra,
    }));
  }

  /**
   * Receives (and deletes) messages until at least `expected` were taken, then
   * on until a receive of `waitSeconds` comes back empty (so extras are seen
   * too). A send is not visible at once on a busy machine: an empty receive
   * before `expected` is reached only means "not yet", so it polls on until
   * `timeoutMs` and then returns what it has (the caller's assertion says what
   * is missing).
   */
  async drain(url: string, expected = 1, { waitSeconds = 1, timeoutMs = 20_000 } = {}): Promise<Message[]> {
    const out: Message[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { Messages = [] } = await this.client.send(new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }));
      if (Messages.length === 0 && (out.length >= expected || Date.now() >= deadline)) return out;
      for (const m of Messages) {
        out.push(m);
        await this.client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
      }
    }
  }

  /** Receives one message without deleting it (it stays invisible for `visibility` seconds); undefined when none arrived. */
  async peek(url: string, visibility = 0, waitSeconds = 0): Promise<Message | undefined> {
    const { Messages = [] } = await this.client.send(new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: waitSeconds,
      VisibilityTimeout: visibility,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }));
    return Messages[0];
  }

  /** Visible, invisible (in flight) and delayed messages of a queue. */
  async counts(url: string): Promise<{ visible: number; inFlight: number; delayed: number }> {
    const { Attributes = {} } = await this.client.send(new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }));
    return {
      visible: Number(Attributes.ApproximateNumberOfMessages),
      inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible),
      delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed),
    };
  }

  /** Polls until `check` passes or `timeoutMs` ends (then throws with the last value). */
  async until<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (check(value)) return value;
      if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
      await sleep(100);
    }
  }

  /** Deletes every queue this helper created, then frees the client. */
  async close(): Promise<void> {
    for (const url of this.created) await this.client.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined);
    this.client.destroy();
  }
}

/** A freshly made envelope, its encoded bytes and projection. */
export function envelope(urn: string, data: JsonObject, queue: string) {
  const env = EnvelopeCodec.make(urn, data, { queue });
  const body = Buffer.from(EnvelopeCodec.encode(env), 'utf8');
  const projection: EnvelopeProjection = {
    urn: env.job,
    traceId: env.trace_id,
    messageId: env.meta.id,
    schemaVersion: env.meta.schema_version,
    lang: env.meta.lang,
    createdAt: env.meta.created_at,
    attempts: env.attempts,
  };
  return { env, body, projection };
}

/** The String attributes of a received message as a plain record. */
export function attributesOf(message: Message | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(message?.MessageAttributes ?? {})) out[name] = `${value.DataType}:${value.StringValue}`;
  return out;
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
