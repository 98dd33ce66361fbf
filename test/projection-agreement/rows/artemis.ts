import type { Connection, EventContext, Message as AmqpMessage } from 'rhea';
import { silentLogger } from '@babelqueue/core';
import { projectArtemis, type ArtemisProjection } from '@babelqueue/core/binding';
import { ArtemisTransport, DELAY_PROPERTY, JMS_TYPE_ANNOTATION } from '@babelqueue/artemis';
import { Raw } from '../../../packages/artemis/test/support/artemis.js';
import { broker, uniqueQueue } from '../../support/brokers.js';
import { until, within } from '../../support/until.js';
import { bodySays } from '../expected.js';
import type { AgreementLab, AgreementRow, CopyKind, NativeRecord, ProduceOptions } from '../row.js';

const suite = broker('artemis');
/** The backoff that makes a retry a re-sent copy (without one, Artemis redelivers the message itself: `modified`). */
const BACKOFF_MS = 200;
const FIELDS = ['subject', 'message_id', 'correlation_id', 'creation_time', 'content_type'] as const;
const PROPERTIES = ['bq_schema_version', 'bq_source_lang', 'bq_attempts', 'bq_app_id', DELAY_PROPERTY];

/** The Artemis projection (FACTS §4) flattened: message fields by rhea name, the JMS-type annotation, the `bq_` properties. */
function contractOf(message: AmqpMessage | ArtemisProjection): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = message as unknown as Record<string, unknown>;
  for (const field of FIELDS) {
    const value = fields[field];
    if (value !== undefined && value !== null) out[field] = value instanceof Date ? value.getTime() : value;
  }
  const type = (message.message_annotations as Record<string, unknown> | undefined)?.[JMS_TYPE_ANNOTATION];
  if (type !== undefined) out[JMS_TYPE_ANNOTATION] = type;
  for (const [key, value] of Object.entries((message.application_properties ?? {}) as Record<string, unknown>)) {
    if (PROPERTIES.includes(key)) out[key] = value;
  }
  return out;
}

function nativeOf(message: AmqpMessage): NativeRecord {
  const riders: Record<string, string> = {};
  for (const [key, value] of Object.entries((message.application_properties ?? {}) as Record<string, unknown>)) {
    if (!PROPERTIES.includes(key)) riders[key] = String(value);
  }
  const body = message.body as unknown;
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from((body as { content: Uint8Array }).content);
  return { body: bytes, contract: contractOf(message), riders };
}

/**
 * Artemis through a plain rhea connection (the package's test `Raw`): a sender writes as a foreign
 * producer would, a browsing receiver (`distribution-mode: copy`) reads the
 * retry copy without taking it, a plain receiver takes the DLQ record.
 */
class ArtemisLab implements AgreementLab {
  private readonly queues: string[] = [];

  private readonly connection: Connection;

  private constructor(private readonly url: string, private readonly raw: Raw) {
    this.connection = raw.connection;
  }

  static async open(url: string): Promise<ArtemisLab> {
    return new ArtemisLab(url, await within(Raw.open(url), 20_000, 'a connection to Artemis'));
  }

  async queue(prefix: string): Promise<string> {
    const name = uniqueQueue(`bq-agree-${prefix}`);
    this.queues.push(name, `${name}.dlq`);
    return name;
  }

  transport(): ArtemisTransport {
    return new ArtemisTransport({ url: this.url, logger: silentLogger });
  }

  async produce(queue: string, body: Buffer, options: ProduceOptions = {}): Promise<void> {
    const projected = projectArtemis(bodySays(options.claims ?? body), options.riders);
    const message: AmqpMessage = {
      durable: true,
      body: body.toString('utf8'),
      content_type: projected.content_type,
      message_annotations: projected.message_annotations,
      application_properties: { ...projected.application_properties },
    };
    if (projected.subject !== undefined) message.subject = projected.subject;
    if (projected.message_id !== undefined) message.message_id = projected.message_id;
    if (projected.correlation_id !== undefined) message.correlation_id = projected.correlation_id;
    if (projected.creation_time !== undefined) message.creation_time = new Date(projected.creation_time);
    if (options.schemaVersion !== undefined) (message.application_properties as Record<string, unknown>).bq_schema_version = options.schemaVersion;
    const sender = this.connection.open_sender({ target: { address: queue, capabilities: ['queue'] } });
    try {
      await within(new Promise<void>((resolve, reject) => {
        sender.once('sendable', () => {
          const delivery = sender.send(message);
          sender.on('accepted', (context: EventContext) => context.delivery === delivery && resolve());
          sender.on('rejected', (context: EventContext) => context.delivery === delivery && reject(new Error(`${queue} rejected the message`)));
        });
      }), 20_000, `the broker to accept a message on ${queue}`);
    } finally {
      sender.close();
    }
  }

  /** The scheduled copy, browsed once it is due (a browser sees no message before its delivery time). */
  readRetry(queue: string): Promise<NativeRecord> {
    return this.first(queue, 'copy');
  }

  readDeadLetter(dlq: string): Promise<NativeRecord> {
    return this.first(dlq, 'move');
  }

  project(body: Buffer, kind: CopyKind): Record<string, unknown> {
    const contract = contractOf(projectArtemis(bodySays(body)));
    return kind === 'retry' && bodySays(body).urn !== '' ? { ...contract, [DELAY_PROPERTY]: String(BACKOFF_MS) } : contract;
  }

  async close(): Promise<void> {
    await this.raw.cleanup(...this.queues);
    await this.raw.close();
  }

  /** The head of `queue`: browsed (`copy`, left in place) or taken and accepted (`move`); polled until one is there. */
  private async first(queue: string, mode: 'copy' | 'move'): Promise<NativeRecord> {
    let found: AmqpMessage | undefined;
    await until(async () => (found = await this.once(queue, mode)) !== undefined, 20_000, `a message on ${queue}`, 50);
    return nativeOf(found!);
  }

  /** One drained round of credit 1 on a fresh link: the head message, or undefined when the queue has none now. */
  private async once(queue: string, mode: 'copy' | 'move'): Promise<AmqpMessage | undefined> {
    const receiver = this.connection.open_receiver({
      source: { address: queue, capabilities: ['queue'], ...(mode === 'copy' ? { distribution_mode: 'copy' } : {}) },
      autoaccept: false,
      credit_window: 0,
    });
    try {
      return await within(new Promise<AmqpMessage | undefined>((resolve) => {
        receiver.once('receiver_open', () => {
          receiver.once('message', (context: EventContext) => {
            if (mode === 'move') context.delivery!.accept();
            resolve(context.message!);
          });
          receiver.once('receiver_drained', () => resolve(undefined));
          receiver.drain = true;
          receiver.add_credit(1);
        });
      }), 10_000, `a drain of ${queue}`);
    } finally {
      receiver.close();
    }
  }
}

export const row: AgreementRow = {
  binding: 'artemis',
  skip: suite.skip,
  fields: { attempts: 'bq_attempts', schemaVersion: 'bq_schema_version' },
  versionGate: true,
  poisonRetry: false,
  ridersOnDeadLetter: true,
  retryOptions: { retryBackoff: { baseMs: BACKOFF_MS, multiplier: 1 } },
  open: () => ArtemisLab.open(suite.url!),
};
