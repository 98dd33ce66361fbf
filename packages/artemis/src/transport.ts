import {
  acceptsEnvelope,
  consoleLogger,
  decodeEnvelope,
  type ConnectOptions,
  type ConsumeOptions,
  type OutgoingMessage,
  type PublishOutcome,
  type ScannedRecord,
  type ScanOptions,
  type Transport,
  type TransportCapabilities,
} from '@babelqueue/core';
import {
  envelopeProjection,
  projectArtemis,
  outcomesOf,
  TransportLifecycle,
  type BindingRules,
  type Delivery,
} from '@babelqueue/core/binding';
import type { Message as AmqpMessage } from 'rhea';
import { browseQueue, countByBrowsing, purgeQueue, scanQueue } from './scan.js';
import { ConnectionManager } from './connection.js';
import { ConsumeLoop } from './consume-loop.js';
import { BROKER } from './errors.js';
import { APP_ID_PROPERTY, bodySection, outgoingMessage } from './projection.js';
import { resolveOptions, type ArtemisTransportOptions, type ResolvedOptions } from './options.js';
import { Publisher } from './publisher.js';
import { ARTEMIS_CAPABILITIES, ARTEMIS_RULES } from './rules.js';
import { maskArtemisUrl } from './url.js';

/**
 * The ActiveMQ Artemis binding over AMQP 1.0 (rhea).
 *
 * - Publishes the envelope as an AMQP-value string (a JMS TextMessage), durable,
 *   to an anycast queue, with the JMS-readable projection: `x-opt-jms-type` and
 *   `subject` = URN (JMSType), `correlation-id` = trace_id, `message-id` = meta.id,
 *   `creation-time` = created_at, and the `bq_` application properties; a delay
 *   is `x-opt-delivery-time` (+ `bq_delay`). A publish resolves once the broker
 *   settled it `accepted`.
 * - Consumes with explicit settlement and credit = concurrency; executes each
 *   settlement decision (see {@link ArtemisDelivery}).
 * - Reconnects with backoff after a lost connection; consumers attach again.
 */
export class ArtemisTransport implements Transport {
  readonly rules: BindingRules = ARTEMIS_RULES;
  readonly capabilities: TransportCapabilities = ARTEMIS_CAPABILITIES;
  readonly target: string;
  private readonly options: ResolvedOptions;
  private readonly connection: ConnectionManager;
  private readonly publisher: Publisher;
  private readonly lifecycle = new TransportLifecycle(BROKER);

  constructor(options: ArtemisTransportOptions) {
    this.options = resolveOptions(options, options.logger ?? consoleLogger());
    this.connection = new ConnectionManager(this.options, this.options.logger);
    this.publisher = new Publisher(this.connection, this.options.logger, this.options.sendTimeoutMs);
    this.target = maskArtemisUrl(this.options.url);
  }

  /** An AMQP connection to the broker is open now: false before `connect`, while it reconnects, and from `close()` on. */
  get connected(): boolean {
    return !this.lifecycle.closed && this.connection.current() !== undefined;
  }

  /**
   * Waits for the connection. Refused credentials and an unverifiable
   * certificate fail at once; an unreachable broker fails when `timeoutMs` runs
   * out, naming the last error. Reconnection after that stays automatic.
   */
  async connect(options: ConnectOptions): Promise<void> {
    this.lifecycle.assertOpen();
    await this.connection.connect(this.target, options);
  }

  /**
   * Publishes one envelope; resolves once Artemis accepted it. Rejects with a
   * clear error when the broker refuses it or the connection is down
   * (`publishWhileDisconnected: 'fail'`, the default).
   */
  async publish(message: OutgoingMessage): Promise<void> {
    this.lifecycle.assertOpen();
    const amqp = outgoingMessage(message.body, projectArtemis(message.projection, message.headers), message.delayMs ?? 0);
    await this.publisher.send(message.queue, amqp, this.options.publishWhileDisconnected === 'wait');
  }

  /**
   * Publishes a batch: every message sent on its queue's link (each exactly as
   * {@link publish} sends it) before any outcome is awaited, then each one's
   * own settlement (accepted, rejected, released, or lost with the link).
   */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.lifecycle.assertOpen();
    if (messages.length === 0) return [];
    const queues = messages.map((message) => message.queue);
    const amqp = messages.map((message) => outgoingMessage(message.body, projectArtemis(message.projection, message.headers), message.delayMs ?? 0));
    return outcomesOf(messages, await this.publisher.sendMany(queues, amqp, this.options.publishWhileDisconnected === 'wait'));
  }

  /**
   * Writes `body` as is to `queue` (a DLQ record, a redrive), durable and
   * accepted; `headers` ride the application properties. A body that is an
   * accepted envelope gets its projection too, so a redriven message routes
   * like a published one.
   */
  async publishRaw(queue: string, body: Buffer, headers: Readonly<Record<string, string>> = {}): Promise<void> {
    this.lifecycle.assertOpen();
    const decoded = decodeEnvelope(body, () => undefined);
    const amqp: AmqpMessage = acceptsEnvelope(decoded)
      ? outgoingMessage(body, projectArtemis(envelopeProjection(decoded), headers))
      : {
          durable: true,
          body: bodySection(body),
          content_type: 'application/json',
          application_properties: { ...headers, [APP_ID_PROPERTY]: 'babelqueue' },
        };
    await this.publisher.send(queue, amqp, this.options.publishWhileDisconnected === 'wait');
  }

  /** Up to `max` bodies from the head of `queue`, left in place (a browsing receiver, `distribution-mode: copy`). */
  async browse(queue: string, max: number): Promise<Buffer[]> {
    this.lifecycle.assertOpen();
    const connection = await this.connection.open(this.options.publishWhileDisconnected === 'wait');
    return browseQueue(connection, this.connection.lost(connection), queue, max);
  }

  /**
   * Reads the messages waiting on `queue` from `offset` on, left in place: one
   * browsing receiver drained a batch at a time (see {@link scanQueue}).
   * Headers are the application properties. No `remove`: AMQP cannot delete
   * one message from the middle of a queue, so tools take and restore.
   */
  async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    this.lifecycle.assertOpen();
    const connection = await this.connection.open(this.options.publishWhileDisconnected === 'wait');
    yield* scanQueue(connection, this.connection.lost(connection), queue, options);
  }

  /** How many messages {@link scan} would read now, counted by browsing them all (AMQP has no queue-depth query). */
  async depth(queue: string): Promise<number> {
    this.lifecycle.assertOpen();
    const connection = await this.connection.open(this.options.publishWhileDisconnected === 'wait');
    return countByBrowsing(connection, this.connection.lost(connection), queue);
  }

  /** Removes every message waiting on `queue` (taken and accepted until none is left); resolves with how many. */
  async purge(queue: string): Promise<number> {
    this.lifecycle.assertOpen();
    const connection = await this.connection.open(this.options.publishWhileDisconnected === 'wait');
    return purgeQueue(connection, this.connection.lost(connection), queue);
  }

  /** Consumes `queue` until the signal aborts or a drain limit is reached. */
  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    this.lifecycle.assertOpen();
    const loop = new ConsumeLoop(
      { connection: this.connection, publisher: this.publisher, logger: this.options.logger, options: this.options },
      queue,
      onDelivery,
      options,
    );
    await this.lifecycle.track(loop.run(this.lifecycle.signal));
  }

  /** Stops the consume loops (in-flight deliveries settle first), then closes the connection. Idempotent. */
  close(): Promise<void> {
    return this.lifecycle.close(async () => {
      this.publisher.close();
      await this.connection.close();
    });
  }
}
