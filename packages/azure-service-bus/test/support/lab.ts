// The Service Bus lab of these suites: the stand-in started by
// `scripts/brokers up asb` (BABELQUEUE_ASB_URL is its connection string), or a
// real namespace when BABELQUEUE_ASB_URL holds a real connection string
// (scripts/asb-real-namespace). Queues are configured through the stand-in's
// `$standin` control node, or the administration client on a real namespace.
import { ServiceBusAdministrationClient, ServiceBusClient, type ServiceBusReceivedMessage } from '@azure/service-bus';
import rhea from 'rhea';
import { EnvelopeCodec, type EnvelopeProjection, type JsonObject } from '@babelqueue/core';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';

export { captureLogger } from '../../../../test/support/capture-logger.js';
export { uniqueQueue };

export const asb = broker('asb');

/** Whether the lab is the stand-in (plain AMQP, UseDevelopmentEmulator=true). */
export function isStandIn(connectionString: string): boolean {
  return /usedevelopmentemulator=true/i.test(connectionString);
}

export interface QueueSettings {
  readonly maxDeliveryCount?: number;
  readonly lockDurationMs?: number;
  readonly status?: 'Active' | 'SendDisabled';
}

/** Creates or updates a queue with the given settings. */
export async function configureQueue(connectionString: string, name: string, settings: QueueSettings = {}): Promise<void> {
  if (!isStandIn(connectionString)) {
    const admin = new ServiceBusAdministrationClient(connectionString);
    const properties = {
      ...(settings.maxDeliveryCount !== undefined ? { maxDeliveryCount: settings.maxDeliveryCount } : {}),
      ...(settings.lockDurationMs !== undefined ? { lockDuration: `PT${Math.ceil(settings.lockDurationMs / 1000)}S` } : {}),
      ...(settings.status !== undefined ? { status: settings.status } : {}),
    };
    if (!(await admin.queueExists(name))) await admin.createQueue(name, properties);
    else await admin.updateQueue({ ...(await admin.getQueue(name)), ...properties });
    return;
  }
  const body: Record<string, unknown> = { name };
  if (settings.maxDeliveryCount !== undefined) body['max-delivery-count'] = settings.maxDeliveryCount;
  if (settings.lockDurationMs !== undefined) body['lock-duration-ms'] = settings.lockDurationMs;
  if (settings.status !== undefined) body.status = settings.status;
  await standInRequest(connectionString, 'configure-queue', body);
}

/** One request to the stand-in's test-only control node. */
async function standInRequest(connectionString: string, operation: string, body: Record<string, unknown>): Promise<any> {
  const endpoint = /endpoint=sb:\/\/([^;/]+)/i.exec(connectionString)![1]!;
  const [host, port] = endpoint.split(':');
  const container = rhea.create_container();
  const connection = container.connect({ host: host!, port: Number(port), reconnect: false });
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the stand-in did not answer ${operation}`)), 10_000);
      const receiver = connection.open_receiver({ source: { address: '$standin' }, target: { address: 'standin-reply' } });
      const sender = connection.open_sender({ target: { address: '$standin' } });
      receiver.on('message', (context) => {
        clearTimeout(timer);
        const status = context.message.application_properties?.statusCode;
        if (status !== 200) reject(new Error(`$standin ${operation}: ${String(context.message.application_properties?.statusDescription)}`));
        else resolve(context.message.body);
      });
      sender.once('sendable', () => {
        sender.send({ message_id: 'control', reply_to: 'standin-reply', application_properties: { operation }, body });
      });
      connection.once('connection_error', (context) => reject(context.connection.error));
    });
  } finally {
    connection.close();
  }
}

/** The official client, for reading back what the binding wrote. */
export class Raw {
  readonly client: ServiceBusClient;
  constructor(connectionString: string) {
    this.client = new ServiceBusClient(connectionString);
  }

  /** Receives (and completes) every message waiting, up to `max`, waiting at most `waitMs` for each batch. */
  async drain(queue: string, options: { subQueue?: 'deadLetter'; max?: number; waitMs?: number } = {}): Promise<ServiceBusReceivedMessage[]> {
    const receiver = this.client.createReceiver(queue, { skipParsingBodyAsJson: true, ...(options.subQueue ? { subQueueType: options.subQueue } : {}) });
    const out: ServiceBusReceivedMessage[] = [];
    try {
      for (;;) {
        const batch = await receiver.receiveMessages(options.max ?? 50, { maxWaitTimeInMs: options.waitMs ?? 1000 });
        for (const message of batch) await receiver.completeMessage(message);
        out.push(...batch);
        if (batch.length === 0 || (options.max !== undefined && out.length >= options.max)) return out;
      }
    } finally {
      await receiver.close();
    }
  }

  /** Sends one message as a foreign producer would. */
  async send(queue: string, message: Parameters<ReturnType<ServiceBusClient['createSender']>['sendMessages']>[0]): Promise<void> {
    const sender = this.client.createSender(queue);
    try {
      await sender.sendMessages(message);
    } finally {
      await sender.close();
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** An envelope's bytes and projection, made with the core codec. */
export function envelope(urn: string, data: JsonObject, queue: string): { body: Buffer; projection: EnvelopeProjection } {
  const env = EnvelopeCodec.make(urn, data, { queue });
  const body = Buffer.from(EnvelopeCodec.encode(env), 'utf8');
  return {
    body,
    projection: {
      urn: env.job,
      traceId: env.trace_id,
      messageId: env.meta.id,
      schemaVersion: env.meta.schema_version,
      lang: env.meta.lang,
      createdAt: env.meta.created_at,
      attempts: env.attempts,
    },
  };
}

/** Body bytes of a received message. */
export function bytesOf(message: ServiceBusReceivedMessage): Buffer {
  return Buffer.isBuffer(message.body) ? message.body : Buffer.from(String(message.body));
}
