import { ServiceBusClient, type ServiceBusReceivedMessage } from '@azure/service-bus';
import { silentLogger } from '@babelqueue/core';
import { projectAsb, type AsbProjection } from '@babelqueue/core/binding';
import { AzureServiceBusTransport, toServiceBusMessage } from '@babelqueue/azure-service-bus';
import { configureQueue } from '../../../packages/azure-service-bus/test/support/lab.js';
import { broker, uniqueQueue } from '../../support/brokers.js';
import { until } from '../../support/until.js';
import { bodySays } from '../expected.js';
import type { AgreementLab, AgreementRow, NativeRecord, ProduceOptions } from '../row.js';

const suite = broker('asb');
/** The backoff that makes a retry a scheduled copy (without one, the lock is abandoned: a native redelivery). */
const BACKOFF_MS = 200;
const FIELDS = ['subject', 'correlationId', 'messageId', 'contentType'] as const;
const PROPERTIES = ['bq-schema-version', 'bq-source-lang', 'bq-created-at'];
/**
 * Service Bus gives a message sent without a MessageId one of its own: 32 hex
 * digits, no dashes (the stand-in does the same). That id is the broker's,
 * not a projected field; a `meta.id` copied from the delivery (a UUID) is.
 */
const BROKER_SET_ID = /^[0-9a-f]{32}$/;

/** The Service Bus projection (FACTS §4) flattened: message fields by SDK name, the typed `bq-` application properties. */
function contractOf(message: ServiceBusReceivedMessage | AsbProjection): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = message as unknown as Record<string, unknown>;
  for (const field of FIELDS) {
    const value = fields[field];
    if (value !== undefined && value !== null) out[field] = value;
  }
  if (typeof out.messageId === 'string' && BROKER_SET_ID.test(out.messageId)) delete out.messageId;
  for (const [key, value] of Object.entries(message.applicationProperties ?? {})) {
    if (PROPERTIES.includes(key)) out[key] = value;
  }
  return out;
}

function nativeOf(message: ServiceBusReceivedMessage): NativeRecord {
  const riders: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.applicationProperties ?? {})) {
    if (!PROPERTIES.includes(key)) riders[key] = String(value);
  }
  const body = Buffer.isBuffer(message.body) ? message.body : Buffer.from(String(message.body));
  return { body, contract: contractOf(message), riders };
}

/**
 * A retry copy's MessageId is `<meta.id>:retry:<sequence number>` (duplicate
 * detection would drop a copy under meta.id: packages/azure-service-bus README);
 * the part before the suffix is what must agree with the body's meta.id.
 */
function retryCopyOf(record: NativeRecord): NativeRecord {
  const id = record.contract.messageId;
  const derived = typeof id === 'string' ? /^(.+):retry:\d+$/.exec(id) : null;
  if (derived === null) throw new Error(`the retry copy's MessageId ${String(id)} is not <meta.id>:retry:<sequence number>`);
  return { ...record, contract: { ...record.contract, messageId: derived[1] } };
}

/**
 * Service Bus (the stand-in here) through the official client: a sender writes
 * as a foreign producer would, `peekMessages` reads the scheduled retry copy
 * without locking it, a receiver takes the DLQ record.
 */
class AsbLab implements AgreementLab {
  private readonly client: ServiceBusClient;

  constructor(private readonly connectionString: string) {
    this.client = new ServiceBusClient(connectionString);
  }

  async queue(prefix: string): Promise<string> {
    const name = uniqueQueue(`bq-agree-${prefix}`);
    await configureQueue(this.connectionString, name);
    await configureQueue(this.connectionString, `${name}.dlq`);
    return name;
  }

  transport(): AzureServiceBusTransport {
    return new AzureServiceBusTransport({ connectionString: this.connectionString, receiveWaitMs: 200, logger: silentLogger });
  }

  async produce(queue: string, body: Buffer, options: ProduceOptions = {}): Promise<void> {
    // The binding's own message builder only pins the AMQP types (int, long) a foreign SDK sends.
    const message = toServiceBusMessage(body, bodySays(options.claims ?? body), options.riders ? { riders: options.riders } : {});
    if (options.schemaVersion !== undefined) message.applicationProperties = { ...message.applicationProperties, 'bq-schema-version': options.schemaVersion };
    const sender = this.client.createSender(queue);
    try {
      await sender.sendMessages(message);
    } finally {
      await sender.close();
    }
  }

  async readRetry(queue: string): Promise<NativeRecord> {
    const receiver = this.client.createReceiver(queue, { skipParsingBodyAsJson: true });
    try {
      let peeked: ServiceBusReceivedMessage[] = [];
      await until(async () => (peeked = await receiver.peekMessages(1)).length > 0, 20_000, `a copy on ${queue}`, 50);
      return retryCopyOf(nativeOf(peeked[0]!));
    } finally {
      await receiver.close();
    }
  }

  async readDeadLetter(dlq: string): Promise<NativeRecord> {
    const receiver = this.client.createReceiver(dlq, { skipParsingBodyAsJson: true });
    try {
      let taken: ServiceBusReceivedMessage[] = [];
      await until(async () => (taken = await receiver.receiveMessages(1, { maxWaitTimeInMs: 500 })).length > 0, 20_000, `a record on ${dlq}`, 10);
      await receiver.completeMessage(taken[0]!);
      return nativeOf(taken[0]!);
    } finally {
      await receiver.close();
    }
  }

  project(body: Buffer): Record<string, unknown> {
    return contractOf(projectAsb(bodySays(body)));
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

export const row: AgreementRow = {
  binding: 'asb',
  skip: suite.skip,
  // No attempts property (FACTS §4): the DeliveryCount counts instead.
  fields: { schemaVersion: 'bq-schema-version' },
  versionGate: true,
  poisonRetry: false,
  ridersOnDeadLetter: true,
  retryOptions: { retryBackoff: { baseMs: BACKOFF_MS, multiplier: 1 } },
  open: async () => new AsbLab(suite.url!),
};
