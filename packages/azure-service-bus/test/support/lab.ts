// The Service Bus lab of these suites: the stand-in started by
// `scripts/brokers up asb` (BABELQUEUE_ASB_URL is its connection string), or a
// real namespace when BABELQUEUE_ASB_URL holds a real connection string
// (scripts/asb-real-namespace). Queues are configured through the stand-in's
// `$standin` control node, or the administration client on a real namespace.
import { ServiceBusAdministrationClient, ServiceBusClient, type ServiceBusReceivedMessage } from '@azure/service-bus';
import rhea from 'rhea';
import { EnvelopeCodec, type JsonObject } from '@babelqueue/core';
import { type EnvelopeProjection } from '@babelqueue/core/binding';
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
  /** `RequiresDuplicateDetection` (set when the queue is created; Service Bus cannot change it later). */
  readonly requiresDuplicateDetection?: boolean;
  /** `DuplicateDetectionHistoryTimeWindow` in ms (Service Bus: 20 s to 7 days, default 10 minutes). */
  readonly duplicateDetectionWindowMs?: number;
  /** `RequiresSession` (set when the queue is created; Service Bus cannot change it later). */
  readonly requiresSession?: boolean;
}

/** Creates or updates a queue with the given settings. */
export async function configureQueue(connectionString: string, name: string, settings: QueueSettings = {}): Promise<void> {
  if (!isStandIn(connectionString)) {
    const admin = new ServiceBusAdministrationClient(connectionString);
    const properties = {
      ...(settings.maxDeliveryCount !== undefined ? { maxDeliveryCount: settings.maxDeliveryCount } : {}),
      ...(settings.lockDurationMs !== undefined ? { lockDuration: `PT${Math.ceil(settings.lockDurationMs / 1000)}S` } : {}),
      ...(settings.status !== undefined ? { status: settings.status } : {}),
      ...(settings.requiresDuplicateDetection !== undefined ? { requiresDuplicateDetection: settings.requiresDuplicateDetection } : {}),
      ...(settings.duplicateDetectionWindowMs !== undefined ? { duplicateDetectionHistoryTimeWindow: `PT${Math.ceil(settings.duplicateDetectionWindowMs / 1000)}S` } : {}),
      ...(settings.requiresSession !== undefined ? { requiresSession: settings.requiresSession } : {}),
    };
    if (!(await admin.queueExists(name))) await admin.createQueue(name, properties);
    else await admin.updateQueue({ ...(await admin.getQueue(name)), ...properties });
    return;
  }
  const body: Record<string, unknown> = { name };
  if (settings.maxDeliveryCount !== undefined) body['max-delivery-count'] = settings.maxDeliveryCount;
  if (settings.lockDurationMs !== undefined) body['lock-duration-ms'] = settings.lockDurationMs;
  if (settings.status !== undefined) body.status = settings.status;
  if (settings.requiresDuplicateDetection !== undefined) body['requires-duplicate-detection'] = settings.requiresDuplicateDetection;
  if (settings.duplicateDetectionWindowMs !== undefined) body['duplicate-detection-window-ms'] = settings.duplicateDetectionWindowMs;
  if (settings.requiresSession !== undefined) body['requires-session'] = settings.requiresSession;
  await standInRequest(connectionString, 'configure-queue', body);
}

/** One request to the stand-in's test-only control node. */
function standInRequest(connectionString: string, operation: string, body: Record<string, unknown>): Promise<any> {
  return amqpRequest(connectionString, '$standin', operation, body);
}

/**
 * One AMQP request/response exchange with a node of the stand-in (`$standin`,
 * `<queue>/$management`) over a plain rhea connection: the stand-in accepts an
 * anonymous connection and no CBS token, a real namespace does not.
 */
async function amqpRequest(connectionString: string, node: string, operation: string, body: unknown): Promise<any> {
  const endpoint = /endpoint=sb:\/\/([^;/]+)/i.exec(connectionString)![1]!;
  const [host, port] = endpoint.split(':');
  const container = rhea.create_container();
  const connection = container.connect({ host: host!, port: Number(port), reconnect: false });
  const replyTo = `reply-${container.id}`;
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the stand-in did not answer ${operation} on ${node}`)), 10_000);
      const receiver = connection.open_receiver({ source: { address: node }, target: { address: replyTo } });
      const sender = connection.open_sender({ target: { address: node } });
      receiver.on('message', (context) => {
        clearTimeout(timer);
        const status = context.message.application_properties?.statusCode;
        if (status !== 200) reject(new Error(`${node} ${operation}: ${String(status)} ${String(context.message.application_properties?.statusDescription)}`));
        else resolve(context.message.body);
      });
      sender.once('sendable', () => {
        sender.send({ message_id: operation, reply_to: replyTo, application_properties: { operation }, body });
      });
      connection.once('connection_error', (context) => reject(context.connection.error));
    });
  } finally {
    connection.close();
  }
}

/** An application property as it is on the wire: its AMQP type and its value. */
export interface WireProperty {
  readonly type: string;
  readonly value: unknown;
}

/** AMQP 1.0 type codes (§1.6) by the primitive type they encode. */
const AMQP_TYPES: Record<number, string> = {
  0x40: 'null', 0x41: 'boolean', 0x42: 'boolean', 0x56: 'boolean',
  0x54: 'int', 0x71: 'int', 0x55: 'long', 0x81: 'long',
  0x43: 'uint', 0x52: 'uint', 0x70: 'uint', 0x44: 'ulong', 0x53: 'ulong', 0x80: 'ulong',
  0x51: 'byte', 0x61: 'short', 0x50: 'ubyte', 0x60: 'ushort',
  0x72: 'float', 0x82: 'double', 0x83: 'timestamp', 0x98: 'uuid',
  0xa0: 'binary', 0xb0: 'binary', 0xa1: 'string', 0xb1: 'string', 0xa3: 'symbol', 0xb3: 'symbol',
};

/** A message as it is on the wire, read by {@link peekWire}. */
export interface WireMessage {
  /** The header's delivery-count: failed deliveries so far (0 on the first delivery). */
  readonly deliveryCount: number;
  /** The data section's bytes. */
  readonly body: Buffer | undefined;
  /** Each application property with the AMQP type it was sent with. */
  readonly applicationProperties: Record<string, WireProperty>;
}

/**
 * The messages on `queue` (waiting, locked or scheduled) as they are on the
 * wire, read with Service Bus's own `peek-message` operation (nothing is
 * locked or removed) and decoded here: the SDKs hand numbers over as numbers,
 * whatever their AMQP width. Stand-in only (see {@link amqpRequest}).
 */
export async function peekWire(connectionString: string, queue: string, max = 10): Promise<WireMessage[]> {
  const types: any = (rhea as any).types;
  const body = types.wrap_map({ 'from-sequence-number': types.wrap_long(1), 'message-count': types.wrap_int(max) });
  const answer = await amqpRequest(connectionString, `${queue}/$management`, 'com.microsoft:peek-message', body);
  return (answer?.messages ?? []).map((item: { message: Buffer }) => {
    const reader = new types.Reader(item.message);
    let deliveryCount = 0;
    let data: Buffer | undefined;
    const applicationProperties: Record<string, WireProperty> = {};
    while (reader.remaining()) {
      const section = reader.read();
      const code = Number(section.descriptor?.value);
      if (code === 0x70) deliveryCount = Number(types.unwrap(section.value[4] ?? types.wrap_uint(0)) ?? 0);
      if (code === 0x75) data = section.value;
      if (code !== 0x74) continue;
      const flat: any[] = section.value;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const value = flat[i + 1];
        applicationProperties[String(flat[i].value)] = {
          type: AMQP_TYPES[value.type.typecode] ?? `0x${Number(value.type.typecode).toString(16)}`,
          value: types.unwrap(value),
        };
      }
    }
    return { deliveryCount, body: data, applicationProperties };
  });
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
