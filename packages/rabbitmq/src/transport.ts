import {
  type BrowseOptions,
  ConfigurationError,
  consoleLogger,
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
  outcomesOf,
  TransportLifecycle,
  type BindingRules,
  type Delivery,
} from '@babelqueue/core/binding';
import type { Channel } from 'amqplib';
import { ConnectionManager } from './connection.js';
import { Consumer } from './consume-loop.js';
import { BROKER, TransportClosedError } from './errors.js';
import { resolveOptions, type RabbitMqTransportOptions, type ResolvedOptions } from './options.js';
import { APP_ID, projectProperties } from './projection.js';
import { Publisher, type PublishRequest } from './publisher.js';
import { assertDeliveryLimit } from './delivery-limit.js';
import { refuseCountedRead } from './queue-type.js';
import { delayQueue, QueueDeclarer } from './queues.js';
import { RABBITMQ_CAPABILITIES, RABBITMQ_QUORUM_RULES, RABBITMQ_RULES } from './rules.js';
import { browseQueue, scanQueue } from './scan.js';
import { assertAmqpUrl, maskAmqpUrl } from './url.js';

/**
 * The RabbitMQ (AMQP 0-9-1) binding over amqplib.
 *
 * - Publishes the envelope bytes on the default exchange, routing key = queue,
 *   after declaring a durable queue, with the native projection (`type`,
 *   `correlation_id`, `message_id`, `app_id`, typed `x-` headers); publisher
 *   confirms on by default.
 * - Consumes with manual acknowledgement in `consume` or `get` mode.
 * - Executes settlement decisions: a retry re-publishes the body with the new
 *   attempts (through `<queue>.delay.<ms>` for a backoff) and acknowledges the
 *   original only once the copy is confirmed; a dead-letter record is written to
 *   its durable queue, confirmed, before the ack.
 * - Reconnects with backoff after a lost connection; consumers resume.
 */
export class RabbitMqTransport implements Transport {
  readonly rules: BindingRules;
  readonly capabilities: TransportCapabilities = RABBITMQ_CAPABILITIES;
  readonly target: string;
  private readonly options: ResolvedOptions;
  private readonly connection: ConnectionManager;
  private readonly queues: QueueDeclarer;
  private readonly publisher: Publisher;
  private readonly lifecycle = new TransportLifecycle(BROKER);

  constructor(options: RabbitMqTransportOptions) {
    assertAmqpUrl(options.url);
    this.options = resolveOptions(options, options.logger ?? consoleLogger());
    const { logger } = this.options;
    this.rules = this.options.queueType === 'quorum' ? RABBITMQ_QUORUM_RULES : RABBITMQ_RULES;
    this.connection = new ConnectionManager(this.options, logger);
    this.queues = new QueueDeclarer(this.connection, logger, this.options);
    this.publisher = new Publisher(this.connection, this.queues, logger);
    this.target = maskAmqpUrl(this.options.url);
  }

  /**
   * Waits for the connection. A refused login or vhost and an unverifiable
   * certificate fail at once; an unreachable broker fails when `timeoutMs` runs
   * out, naming the last error. Reconnection after that stays automatic.
   */
  async connect(options: ConnectOptions): Promise<void> {
    this.lifecycle.assertOpen();
    await this.connection.connect(this.target, options);
  }

  /**
   * Publishes one envelope. Resolves once RabbitMQ confirmed it (with `confirm`,
   * the default); rejects with a clear error when the broker refuses it, the
   * queue is gone, or the connection is down (`publishWhileDisconnected: 'fail'`).
   * A `delayMs` routes it through the holding queue `<queue>.delay.<ms>`.
   */
  publish(message: OutgoingMessage): Promise<void> {
    // Not async: the send's own promise goes back (no wrapper per message); a throw still arrives as a rejection.
    try {
      this.lifecycle.assertOpen();
      return this.publisher.send(this.request(message));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Publishes a batch in one confirm window: every message is written on the
   * confirm channel (each exactly as {@link publish} writes it, queues declared
   * once) before any confirm is awaited; each message's outcome is its own
   * confirm, nack, return or channel loss.
   */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.lifecycle.assertOpen();
    return outcomesOf(messages, await this.publisher.sendMany(messages.map((m) => this.request(m))));
  }

  private request(message: OutgoingMessage): PublishRequest {
    const delayMs = message.delayMs ?? 0;
    return {
      spec: delayMs > 0 ? delayQueue(message.queue, delayMs) : { kind: 'work', name: message.queue },
      body: message.body,
      properties: projectProperties(message.projection, message.headers),
      confirm: this.options.confirm,
      wait: this.options.publishWhileDisconnected === 'wait',
    };
  }

  /** Writes `body` as is to `queue` (a DLQ record, a redrive), persistent and confirmed; `headers` ride the AMQP headers. */
  async publishRaw(queue: string, body: Buffer, headers: Readonly<Record<string, string>> = {}): Promise<void> {
    this.lifecycle.assertOpen();
    await this.publisher.send({
      spec: { kind: 'work', name: queue },
      body,
      properties: {
        appId: APP_ID,
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        deliveryMode: 2,
        headers: { ...headers },
      },
      confirm: true,
      wait: this.options.publishWhileDisconnected === 'wait',
    });
  }

  /**
   * Reads up to `max` bodies from the head of `queue` without consuming them:
   * taken with basic.get and put back in place when the browsing channel
   * closes (RabbitMQ marks them redelivered). Refused on any queue but a
   * classic one unless `allowCountedReads`, as {@link scan}. An absent queue
   * reads as empty.
   */
  async browse(queue: string, max: number, options: BrowseOptions = {}): Promise<Buffer[]> {
    if (options.allowCountedReads !== true) await refuseCountedRead(await this.connection.open(this.options.publishWhileDisconnected === 'wait'), queue, 'browse');
    return this.withChannel((channel) => browseQueue(channel, queue, max), []);
  }

  /**
   * Reads the ready messages of `queue` from `offset` on without consuming
   * them. AMQP 0-9-1 has no peek, so the scan opens a channel of its own and
   * takes messages one by one with `basic.get` (no ack), yielding those at or
   * past `offset`; when the iteration ends (or after `scanWindow` messages,
   * default 10000) the channel is closed and RabbitMQ puts every held message
   * back in its place. While a scan runs, the messages it read are invisible to
   * consumers of the queue; RabbitMQ marks them redelivered, and on a quorum
   * queue each scan raises their `x-delivery-count` (so a `delivery-limit` on
   * a DLQ would count scans and drop records). So a scan first tells the
   * queue's type (`queueType`, queue-type.ts) and, unless `allowCountedReads` is
   * set, refuses any queue but a classic one with a `CountedReadError`, before
   * it takes anything. Headers are the AMQP headers table plus the basic
   * properties as `amqp.<name>`. An absent queue reads as empty.
   */
  async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    this.lifecycle.assertOpen();
    const offset = options.offset ?? 0;
    const model = await this.connection.open(this.options.publishWhileDisconnected === 'wait');
    if (options.allowCountedReads !== true) await refuseCountedRead(model, queue, 'scan');
    yield* scanQueue(model, queue, { offset, window: this.options.scanWindow, signal: options.signal });
  }

  /** The ready messages of `queue` (`queue.declare` passive); messages held unacknowledged are not counted. An absent queue is 0. */
  async depth(queue: string): Promise<number> {
    return this.withChannel(async (channel) => (await channel.checkQueue(queue)).messageCount, 0);
  }

  /** The ready messages of `queue` ({@link depth}): what a free consumer could take now. */
  readyCount(queue: string): Promise<number> {
    return this.depth(queue);
  }

  /** An AMQP connection is open now: false before `connect`, while it reconnects, and from `close()` on. */
  get connected(): boolean {
    return !this.lifecycle.closed && this.connection.current() !== undefined;
  }

  /** Removes every ready message of `queue`; resolves with how many. An absent queue purges 0. */
  async purge(queue: string): Promise<number> {
    return this.withChannel(async (channel) => (await channel.purgeQueue(queue)).messageCount, 0);
  }

  /** Consumes `queue` until the signal aborts or a drain limit is reached; see {@link RabbitMqTransportOptions.mode}. */
  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    this.lifecycle.assertOpen();
    if (options.maxAttempts !== undefined) {
      try {
        await this.checkDeliveryLimit(queue, options.maxAttempts, options.signal);
      } catch (error) {
        // Closed while the check waited for a connection: the consume ends as a closed one does.
        if (this.lifecycle.closed && error instanceof TransportClosedError) return;
        throw error;
      }
    }
    const consumer = new Consumer(
      { connection: this.connection, queues: this.queues, publisher: this.publisher, logger: this.options.logger, options: this.options },
      queue,
      onDelivery,
      options,
    );
    await this.lifecycle.track(consumer.run(this.lifecycle.signal));
  }

  /** Stops the consume loops (in-flight deliveries settle first), then closes the connection. Idempotent. */
  close(): Promise<void> {
    return this.lifecycle.close(() => this.connection.close());
  }

  /**
   * Refuses to consume a quorum queue whose delivery limit is below the App's
   * `maxAttempts` (`assertDeliveryLimit`), once the queue is declared as a
   * consume declares it. A connection lost mid-check is waited out and the
   * check run again on the next one; an abort of the consume ends the wait.
   */
  private async checkDeliveryLimit(queue: string, maxAttempts: number, signal: AbortSignal): Promise<void> {
    const aborted = new Promise<'stop'>((resolve) => {
      if (signal.aborted) resolve('stop');
      signal.addEventListener('abort', () => resolve('stop'), { once: true });
    });
    for (;;) {
      const model = await Promise.race([this.connection.open(true), aborted]);
      if (model === 'stop') return;
      try {
        await this.queues.ensure(model, { kind: 'work', name: queue }, true);
        await assertDeliveryLimit(model, queue, maxAttempts);
        return;
      } catch (error) {
        if (error instanceof ConfigurationError || this.connection.terminal() || this.connection.current() === model) throw error;
        this.options.logger.debug({ queue }, 'connection lost while checking the delivery limit; checking again on the next one');
      }
    }
  }

  /** Runs `use` on a short-lived channel; a 404 (no such queue) yields `absent`. */
  private async withChannel<T>(use: (channel: Channel) => Promise<T>, absent: T): Promise<T> {
    this.lifecycle.assertOpen();
    const model = await this.connection.open(this.options.publishWhileDisconnected === 'wait');
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    try {
      return await use(channel);
    } catch (error) {
      if ((error as { code?: number }).code === 404) return absent;
      throw error;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
}
