import { ConfigurationError, consoleLogger, TransportClosedError, type Logger } from '@babelqueue/core';
import { Kafka, Partitioners, logLevel, type Admin, type KafkaConfig, type LogEntry, type Message, type Producer } from 'kafkajs';
import type { RecordWrite } from './delivery.js';
import { GatheredWrites } from './gathered-writes.js';
import { armRequestQueueTimerOnlyWhenNeeded } from './request-queue-timer.js';
import { parseKafkaUrl } from './url.js';
import { PRODUCER_RETRY, sendWhole } from './whole-send.js';

/** A record to write: where, and what kafkajs writes (the record timestamp in ms as a string, default now). */
export type KafkaRecord = RecordWrite & { timestamp?: string };

/** How to reach the cluster; shared by {@link KafkaTransport} and {@link KafkaReinjector}. */
export interface KafkaConnectionOptions {
  /** Bootstrap servers, `host:port`. Either this or `url`. */
  readonly brokers?: readonly string[];
  /** `kafka://host:port[,host:port]` (see {@link parseKafkaUrl}). Either this or `brokers`. */
  readonly url?: string;
  /** kafkajs client id. Default `"babelqueue"`. */
  readonly clientId?: string;
  /** Extra kafkajs client settings (ssl, sasl, connectionTimeout, retry, …). */
  readonly kafka?: Omit<KafkaConfig, 'brokers' | 'clientId' | 'logCreator'>;
  /** pino-compatible logger; kafkajs' own log lines go there too. Never given a record body. */
  readonly logger?: Logger;
}

/**
 * One kafkajs client with a lazily connected producer (acks=all) and admin,
 * shared by every consume loop of a transport.
 */
export class KafkaConnection {
  readonly kafka: Kafka;
  readonly logger: Logger;
  private producerReady: Promise<Producer> | undefined;
  private closed = false;
  private adminReady: Promise<Admin> | undefined;
  /** The client's retry settings, which {@link sendWhole} follows for produce calls. */
  private readonly retry: KafkaConfig['retry'];
  private readonly gathered = new GatheredWrites<KafkaRecord>({
    many: (topic, records) => this.send(topic, records),
    one: (record) => this.send(record.topic, [record]),
  });

  constructor(options: KafkaConnectionOptions) {
    this.logger = options.logger ?? consoleLogger();
    const fromUrl = options.url !== undefined ? parseKafkaUrl(options.url) : undefined;
    const brokers = options.brokers ?? fromUrl?.brokers;
    if (brokers === undefined || brokers.length === 0) {
      throw new ConfigurationError('the Kafka transport needs `brokers` (["host:port"]) or `url` (kafka://host:port)');
    }
    this.retry = options.kafka?.retry;
    armRequestQueueTimerOnlyWhenNeeded();
    this.kafka = new Kafka({
      ...(fromUrl?.ssl !== undefined ? { ssl: fromUrl.ssl } : {}),
      ...(fromUrl?.sasl !== undefined ? { sasl: fromUrl.sasl } : {}),
      ...options.kafka,
      brokers: [...brokers],
      clientId: options.clientId ?? fromUrl?.clientId ?? 'babelqueue',
      logLevel: options.kafka?.logLevel ?? logLevel.INFO,
      logCreator: () => (entry: LogEntry) => forward(this.logger, entry),
    });
  }

  /** The producer, connected on first use. */
  producer(): Promise<Producer> {
    // A write that comes after close (a split batch's records sent again) never opens a producer nobody closes.
    if (this.closed) return Promise.reject(new TransportClosedError('Kafka'));
    this.producerReady ??= (async () => {
      const producer = this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true, retry: PRODUCER_RETRY });
      await producer.connect();
      return producer;
    })().catch((error: unknown) => {
      this.producerReady = undefined;
      throw error;
    });
    return this.producerReady;
  }

  /** The admin client, connected on first use. */
  admin(): Promise<Admin> {
    this.adminReady ??= (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      return admin;
    })().catch((error: unknown) => {
      this.adminReady = undefined;
      throw error;
    });
    return this.adminReady;
  }

  /**
   * Writes one record and resolves once every in-sync replica has it
   * (acks=all). Records written to one topic in the same run of callbacks go
   * out in one produce call ({@link GatheredWrites}).
   */
  write(record: KafkaRecord): Promise<void> {
    return this.gathered.write(record);
  }

  /** One produce call of `records`, all bound for `topic`; a retriable failure sends it again whole. */
  private async send(topic: string, records: readonly KafkaRecord[]): Promise<void> {
    const producer = await this.producer();
    // kafkajs reads key, value, headers and timestamp of each record, and leaves its `topic` alone.
    await sendWhole(() => producer.send({ topic, acks: -1, messages: records as KafkaRecord[] }), this.retry);
  }

  /**
   * Writes many records in one produce call (one request per broker, records
   * grouped by topic in the order given) and resolves once every in-sync
   * replica has them (acks=all). A retriable failure sends the call again
   * whole ({@link sendWhole}); a final failure fails the call as a whole.
   */
  async writeMany(records: readonly KafkaRecord[]): Promise<void> {
    const producer = await this.producer();
    // Each record goes to kafkajs as its message, without a copy per record (kafkajs reads
    // key, value, headers and timestamp, and leaves the record's `topic` alone).
    const byTopic = new Map<string, Message[]>();
    for (const record of records) {
      const messages = byTopic.get(record.topic);
      if (messages === undefined) byTopic.set(record.topic, [record]);
      else messages.push(record);
    }
    const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    await sendWhole(() => producer.sendBatch({ acks: -1, topicMessages }), this.retry);
  }

  /** Disconnects the producer and admin. Idempotent. */
  async close(): Promise<void> {
    // Records gathered this tick leave on the producer being closed, never on a new one.
    this.gathered.flush();
    this.closed = true;
    const producer = this.producerReady;
    const admin = this.adminReady;
    this.producerReady = undefined;
    this.adminReady = undefined;
    await Promise.allSettled([
      producer?.then((p) => p.disconnect()),
      admin?.then((a) => a.disconnect()),
    ]);
  }
}

/**
 * kafkajs log lines into the BabelQueue logger. Its INFO chatter goes to
 * debug, and the per-request protocol errors its Connection logs (retried, or
 * surfaced as an exception the binding reports) to warn.
 */
function forward(logger: Logger, entry: LogEntry): void {
  const { message, timestamp: _t, logger: _l, ...fields } = entry.log as { message: string; timestamp?: string; logger?: string } & Record<string, unknown>;
  const text = `kafkajs ${entry.namespace}: ${message}`;
  const data = { ...fields };
  switch (entry.level) {
    case logLevel.ERROR:
      if (entry.namespace === 'Connection') logger.warn(data, text);
      else logger.error(data, text);
      return;
    case logLevel.WARN:
      logger.warn(data, text);
      return;
    default:
      logger.debug(data, text);
  }
}
