import { connect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { silentLogger } from '@babelqueue/core';
import { projectRabbitMq } from '@babelqueue/core/binding';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { broker, uniqueQueue } from '../../support/brokers.js';
import { until } from '../../support/until.js';
import { bodySays } from '../expected.js';
import type { AgreementLab, AgreementRow, NativeRecord } from '../row.js';

const suite = broker('rabbitmq');
const PROPERTIES = ['type', 'correlationId', 'messageId', 'appId', 'contentType', 'contentEncoding', 'deliveryMode'] as const;
const HEADERS = ['x-schema-version', 'x-source-lang', 'x-attempts'];

/** The RabbitMQ projection (FACTS §4) flattened: properties by amqplib name, headers by header name. */
function contractOf(projected: Record<string, unknown> & { headers?: Record<string, unknown> }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of PROPERTIES) if (projected[key] !== undefined) out[key] = projected[key];
  for (const key of HEADERS) if (projected.headers?.[key] !== undefined) out[key] = projected.headers[key];
  return out;
}

function nativeOf(message: GetMessage): NativeRecord {
  const properties = message.properties as unknown as Record<string, unknown> & { headers?: Record<string, unknown> };
  const riders: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties.headers ?? {})) {
    if (!HEADERS.includes(key) && value !== undefined) riders[key] = String(value);
  }
  return { body: message.content, contract: contractOf(properties), riders };
}

class RabbitLab implements AgreementLab {
  private readonly queues: string[] = [];
  private constructor(private readonly url: string, private readonly model: ChannelModel) {}

  static async open(url: string): Promise<RabbitLab> {
    return new RabbitLab(url, await connect(url));
  }

  async queue(prefix: string): Promise<string> {
    const name = uniqueQueue(`bq-agree-${prefix}`);
    this.queues.push(name, `${name}.dlq`);
    return name;
  }

  transport() {
    // basic.get: nothing is prefetched, so the retry copy stays on the queue between consumes.
    return new RabbitMqTransport({ url: this.url, mode: 'get', poll: { minMs: 10, maxMs: 100 }, requeueDelayMs: 50, logger: silentLogger });
  }

  async produce(queue: string, body: Buffer, options: Parameters<AgreementLab['produce']>[2] = {}): Promise<void> {
    const projected = projectRabbitMq(bodySays(options.claims ?? body), options.riders);
    const headers: Record<string, unknown> = { ...projected.headers };
    if (options.schemaVersion !== undefined) headers['x-schema-version'] = options.schemaVersion;
    const channel = await this.model.createConfirmChannel();
    try {
      await channel.assertQueue(queue, { durable: true });
      channel.sendToQueue(queue, body, { ...projected, headers });
      await channel.waitForConfirms();
    } finally {
      await channel.close();
    }
  }

  async readRetry(queue: string): Promise<NativeRecord> {
    // Taken and put back (nack + requeue: it returns to the head of the queue).
    return this.get(queue, (channel, message) => channel.nack(message, false, true));
  }

  async readDeadLetter(dlq: string): Promise<NativeRecord> {
    return this.get(dlq, (channel, message) => channel.ack(message));
  }

  project(body: Buffer): Record<string, unknown> {
    const projected = projectRabbitMq(bodySays(body));
    // Integers travel as AMQP integers and read back as numbers.
    return contractOf(projected as unknown as Record<string, unknown> & { headers?: Record<string, unknown> });
  }

  async close(): Promise<void> {
    const channel = await this.model.createChannel();
    for (const queue of this.queues) await channel.deleteQueue(queue).catch(() => undefined);
    await this.model.close().catch(() => undefined);
  }

  private async get(queue: string, settle: (channel: Channel, message: GetMessage) => void): Promise<NativeRecord> {
    const channel = await this.model.createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.assertQueue(queue, { durable: true });
      let message: GetMessage | false = false;
      await until(async () => (message = await channel.get(queue)) !== false, 20_000, `a message on ${queue}`);
      const got = message as unknown as GetMessage;
      settle(channel, got);
      return nativeOf(got);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
}

export const row: AgreementRow = {
  binding: 'rabbitmq',
  skip: suite.skip,
  fields: { attempts: 'x-attempts', schemaVersion: 'x-schema-version' },
  versionGate: false, // the seeds define no RabbitMQ gate (x-schema-version is a projection only)
  poisonRetry: false,
  ridersOnDeadLetter: true,
  open: () => RabbitLab.open(suite.url!),
};
