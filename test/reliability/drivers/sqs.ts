import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { SqsTransport } from '@babelqueue/sqs';
import { killSockets } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

/** The visibility timeout every receive asks for: a killed worker's messages come back after it. */
const VISIBILITY_S = 3;
/** Any static key works on ElasticMQ. */
const CREDENTIALS = { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' };
const REGION = 'us-east-1';

/** A plain SDK client, for looking at the server from outside the binding. */
async function inspect<T>(target: DriverTarget, work: (client: SQSClient) => Promise<T>): Promise<T> {
  const client = new SQSClient({ endpoint: target.url, region: REGION, credentials: CREDENTIALS });
  try {
    return await work(client);
  } finally {
    client.destroy();
  }
}

/** The queue's URL, or undefined when it does not exist. */
async function urlOf(client: SQSClient, queue: string): Promise<string | undefined> {
  try {
    return (await client.send(new GetQueueUrlCommand({ QueueName: queue }))).QueueUrl;
  } catch (error) {
    if ((error as { name?: string }).name?.includes('NonExistentQueue') || (error as { name?: string }).name === 'QueueDoesNotExist') return undefined;
    throw error;
  }
}

/** True when SQS cannot carry `body`: empty, not UTF-8, or a character outside its allowed set (#x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD #x10000+). */
function refuses(body: Buffer): boolean {
  if (body.length === 0) return true;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return true;
  }
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const allowed = code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || code >= 0x10000;
    if (!allowed) return true;
  }
  return false;
}

const driver: BrokerDriver = {
  name: 'sqs',
  lab: 'sqs',
  description: `ElasticMQ (SQS API, queues and messages in its H2 file), visibility ${VISIBILITY_S} s renewed while handled, 1 s polls`,
  transport: (target) => new SqsTransport({
    endpoint: target.url,
    region: REGION,
    credentials: CREDENTIALS,
    visibilityTimeoutSeconds: VISIBILITY_S,
    waitTimeSeconds: 1,
    logger: target.logger,
  }),
  queue: (base) => base,
  prepare: (target, queue, dlq) => inspect(target, async (client) => {
    for (const name of [queue, dlq]) await client.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: String(VISIBILITY_S) } }));
  }),
  leftover: (target, queue) => inspect(target, async (client): Promise<Record<string, number>> => {
    const url = await urlOf(client, queue);
    if (url === undefined) return { ready: 0 };
    const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
    const { Attributes = {} } = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...names] }));
    return { ready: Number(Attributes[names[0]] ?? 0), inFlight: Number(Attributes[names[1]] ?? 0), delayed: Number(Attributes[names[2]] ?? 0) };
  }),
  ports: (url) => [Number(new URL(url).port)],
  cut: async (target) => `ss -K: ${await killSockets(Number(new URL(target.url).port))} connection(s) to ElasticMQ`,
  cleanup: (target, queues) => inspect(target, async (client) => {
    for (const queue of queues) {
      const url = await urlOf(client, queue).catch(() => undefined);
      if (url !== undefined) await client.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined);
    }
  }),
  // A spare worker has loaded the AWS SDK before it is needed, and a kill always leaves a worker
  // consuming, so kills come every few hundred ms here too.
  chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: (VISIBILITY_S + 3) * 1000 },
  // ElasticMQ's default MaximumMessageSize is 256 KiB (SQS's own default); poison bodies stay under half of this.
  maxBodyBytes: 250_000,
  refuses,
};

export default driver;
