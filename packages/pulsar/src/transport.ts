import {
  ConnectError,
  consoleLogger,
  pause,
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
  connectWithin,
  publishOutcomes,
  TransportLifecycle,
  type BindingRules,
  type Delivery,
} from '@babelqueue/core/binding';
import { PulsarAdmin } from './admin.js';
import { isConfigurationFailure, PulsarConnection } from './connection.js';
import { ConsumeLoop } from './consume-loop.js';
import { BROKER, PulsarAdminError } from './errors.js';
import { resolveOptions, type PulsarTransportOptions, type ResolvedOptions } from './options.js';
import { peekSubscription } from './scan.js';
import { Producers } from './publisher.js';
import type { Send } from './send.js';
import { publishProperties } from './projection.js';
import { PULSAR_CAPABILITIES, PULSAR_RULES } from './rules.js';
import { topicOf, type Topic } from './topics.js';

/**
 * The Apache Pulsar binding: consumers on Pulsar's binary protocol when its
 * service URL is known (the binding's own client; the native one cannot be
 * installed everywhere), publishing and the admin tasks over the broker's web
 * service (the WebSocket API with `ws`, the REST admin API).
 *
 * - Publishes the envelope bytes to `persistent://<tenant>/<namespace>/<queue>`
 *   with the `bq-` string properties, and resolves only on the broker's send
 *   receipt (the message is stored). Delays ride `deliverAfterMs` and `bq-delay`.
 * - Consumes a subscription (`babelqueue`, Shared, by default) in pull mode with
 *   at most `concurrency` messages in flight, reconnecting when the connection drops.
 * - Executes settlement decisions: a retry re-publishes the copy with the new
 *   attempts and acknowledges the original once the copy is stored; a
 *   dead-letter record is stored in `<queue>.dlq` before the ack.
 */
export class PulsarTransport implements Transport {
  readonly rules: BindingRules = PULSAR_RULES;
  readonly capabilities: TransportCapabilities = PULSAR_CAPABILITIES;
  readonly target: string;
  private readonly options: ResolvedOptions;
  private readonly connection: PulsarConnection;
  private readonly admin: PulsarAdmin;
  private readonly producers: Producers;
  /** Topics whose subscription this transport has created (or found), so a publish asks only once. */
  private readonly subscribed = new Map<string, Promise<void>>();
  private readonly lifecycle = new TransportLifecycle(BROKER);
  private probed = false;

  constructor(options: PulsarTransportOptions) {
    this.options = resolveOptions(options, options?.logger ?? consoleLogger());
    this.connection = new PulsarConnection(this.options);
    this.admin = new PulsarAdmin(this.connection);
    this.producers = new Producers(this.connection, this.options.sendTimeoutMs, this.options.logger);
    const { shownUrl, webServiceUrl, subscription, subscriptionType } = this.options;
    const web = shownUrl.startsWith('http') ? '' : ` via ${webServiceUrl.origin}`;
    this.target = `${shownUrl}${web} (subscription ${subscription}, ${subscriptionType})`;
  }

  /**
   * Checks that the web service answers and takes the credentials (an admin
   * API read; a token that may not administer the tenant still passes). A
   * refused token or an unknown tenant fails at once; an unreachable broker
   * fails when `timeoutMs` runs out, naming the last error.
   */
  async connect(options: ConnectOptions): Promise<void> {
    this.assertOpen();
    if (this.probed) return;
    await connectWithin(this.target, options, async ({ signal, note }) => {
      for (let failures = 1; ; failures++) {
        try {
          await this.admin.probe(this.options.tenant);
          this.probed = true;
          return;
        } catch (error) {
          if (error instanceof PulsarAdminError || isConfigurationFailure(error)) {
            throw new ConnectError(this.target, (error as Error).message, { cause: error });
          }
          note(error);
          await pause(Math.min(1000, 100 * failures), signal);
          if (signal.aborted) return;
        }
      }
    });
  }

  /**
   * The web service answered the last WebSocket opened or admin request sent
   * (the consumer's socket is reopened after a loss, so an outage shows at the
   * first failed reopen); false before `connect` and after `close()`.
   */
  get connected(): boolean {
    return this.probed && !this.lifecycle.closed && this.connection.reachable;
  }

  /**
   * Publishes one envelope; resolves once Pulsar stored it (its send receipt
   * said `ok`). Rejects with a clear error when the broker refuses it or cannot
   * be reached; a publish is never queued through an outage.
   */
  async publish(message: OutgoingMessage): Promise<void> {
    this.assertOpen();
    const delayMs = message.delayMs ?? 0;
    await this.send(message.queue, {
      body: message.body,
      properties: publishProperties(message.projection, message.headers, delayMs),
      delayMs,
    });
  }

  /**
   * Publishes a batch on the topics' WebSocket producers: every message sent
   * (each exactly as {@link publish} sends it) before any receipt is awaited,
   * then each one's own receipt.
   */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.assertOpen();
    return publishOutcomes(messages, messages.map((message) => this.publish(message)));
  }

  /** Writes `body` as is to `queue` (a DLQ record, a redrive), stored before it resolves; `headers` ride the properties. */
  async publishRaw(queue: string, body: Buffer, headers: Readonly<Record<string, string>> = {}): Promise<void> {
    this.assertOpen();
    await this.send(queue, { body, properties: { ...headers } });
  }

  /**
   * Reads up to `max` bodies from the head of the subscription's backlog
   * without consuming them (the first records of {@link scan}). A topic or
   * subscription that does not exist reads as empty.
   */
  async browse(queue: string, max: number): Promise<Buffer[]> {
    const bodies: Buffer[] = [];
    if (max <= 0) return bodies;
    for await (const record of this.scan(queue)) {
      bodies.push(record.body);
      if (bodies.length >= max) break;
    }
    return bodies;
  }

  /**
   * Reads the subscription's backlog from `offset` on without acknowledging
   * anything: the admin API's peek, a window of positions at a time (see
   * {@link peekSubscription}). Headers are the message properties.
   */
  async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    this.assertOpen();
    yield* peekSubscription(this.admin, this.topic(queue), this.options.subscription, options);
  }

  /**
   * The subscription's backlog (`msgBacklog` of the topic stats; 0 for a
   * missing topic). Pulsar counts stored entries: a batch a batching producer
   * wrote counts once here, while {@link scan} reads each of its messages.
   */
  /** The topics of the binding's tenant and namespace (the admin API), by local name; a partitioned topic once. */
  async listQueues(): Promise<string[]> {
    this.assertOpen();
    const topics = await this.admin.topics(this.options.tenant, this.options.namespace);
    return [...new Set(topics.map((name) => name.slice(name.lastIndexOf('/') + 1).replace(/-partition-\d+$/, '')))];
  }

  async depth(queue: string): Promise<number> {
    this.assertOpen();
    return this.admin.backlog(this.topic(queue), this.options.subscription);
  }

  /** Acknowledges the subscription's whole backlog; resolves with how many it held (0 for a missing topic). */
  async purge(queue: string): Promise<number> {
    this.assertOpen();
    const topic = this.topic(queue);
    const count = await this.admin.backlog(topic, this.options.subscription);
    if (count > 0) await this.admin.skipAll(topic, this.options.subscription);
    return count;
  }

  /** Consumes `queue` until the signal aborts or a drain limit is reached. */
  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    this.assertOpen();
    const loop = new ConsumeLoop(
      {
        connection: this.connection,
        admin: this.admin,
        options: this.options,
        logger: this.options.logger,
        send: (target, message) => this.send(target, message),
      },
      queue,
      this.topic(queue),
      onDelivery,
      options,
    );
    await this.lifecycle.track(loop.run(this.lifecycle.signal));
  }

  /** Stops the consume loops (in-flight deliveries settle first), then closes every WebSocket. Idempotent. */
  close(): Promise<void> {
    return this.lifecycle.close(() => this.producers.close());
  }

  /** The topic of a queue name (or a full topic name). */
  topic(queue: string): Topic {
    return topicOf(queue, this.options.tenant, this.options.namespace);
  }

  private async send(queue: string, message: Send): Promise<void> {
    const topic = this.topic(queue);
    if (this.options.createSubscription) await this.ensureSubscription(topic);
    await this.producers.send(topic, message);
  }

  /** Creates the subscription on a topic before its first publish here (once; a failure is tried again next time). */
  private ensureSubscription(topic: Topic): Promise<void> {
    let pending = this.subscribed.get(topic.name);
    if (pending === undefined) {
      pending = this.admin.ensureSubscription(topic, this.options.subscription, this.options.initialPosition);
      this.subscribed.set(topic.name, pending);
      pending.catch(() => this.subscribed.delete(topic.name));
    }
    return pending;
  }

  private assertOpen(): void {
    this.lifecycle.assertOpen();
  }
}
