import { isServiceBusError, type ServiceBusClient, type ServiceBusMessage, type ServiceBusReceivedMessage, type ServiceBusReceiver } from '@azure/service-bus';
import {
  ConfigurationError,
  pause,
  reconnectDelayMs,
  type ConnectOptions,
  type ConsumeOptions,
  type OutgoingMessage,
  type PublishOutcome,
  type ResolvedReconnectBackoff,
  type ScannedRecord,
  type ScanOptions,
  type Transport,
  type TransportCapabilities,
} from '@babelqueue/core';
import {
  connectWithin,
  TransportLifecycle,
  type BindingRules,
  type Delivery,
  type EnvelopeProjection,
} from '@babelqueue/core/binding';
import { Connection } from './connection.js';
import { consumeLoop } from './consume-loop.js';
import { streamLoop } from './stream-loop.js';
import { AsbDelivery } from './delivery.js';
import { BROKER, isUnreachable } from './errors.js';
import { resolveOptions, type AzureServiceBusTransportOptions, type ResolvedOptions } from './options.js';
import { countByPeeking, peekQueue, sessionIdsOf } from './scan.js';
import { Publisher } from './publisher.js';
import { sessionLoop } from './session-loop.js';
import { ASB_CAPABILITIES, ASB_RULES } from './rules.js';
import { describeAddress, parseAddress, type AsbAddress } from './url.js';

/** The entity `connect()` opens a sender to; a namespace answering "not found" is reachable and authorised. */
const CONNECT_PROBE_ENTITY = 'babelqueue-connect-check';
/** Pauses between connect attempts to a namespace that does not answer yet: 100 ms doubling, at most 1 s. */
const CONNECT_RETRY_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 100, maxDelayMs: 1_000, multiplier: 2 });

/** Receives (and so deletes) everything a ReceiveAndDelete receiver gets, then closes it; returns the count. */
async function receiveAll(receiver: ServiceBusReceiver): Promise<number> {
  let count = 0;
  try {
    for (;;) {
      const taken = await receiver.receiveMessages(100, { maxWaitTimeInMs: 500 });
      if (taken.length === 0) return count;
      count += taken.length;
    }
  } finally {
    await receiver.close();
  }
}

/** One connect attempt: a sender's first batch opens the connection, the CBS token and the link. */
async function probe(client: ServiceBusClient, signal: AbortSignal): Promise<void> {
  const sender = client.createSender(CONNECT_PROBE_ENTITY);
  try {
    await sender.createMessageBatch({ abortSignal: signal });
  } catch (error) {
    if (isServiceBusError(error) && error.code === 'MessagingEntityNotFound') return;
    throw error;
  } finally {
    void sender.close().catch(() => undefined);
  }
}

/**
 * The Azure Service Bus binding over the official `@azure/service-bus`.
 *
 * - Publishes the envelope bytes as the body (a data section) with the native
 *   projection: subject = URN, correlationId = trace_id, messageId = meta.id,
 *   contentType JSON and the typed `bq-` application properties; riders beside
 *   them; a delay as `scheduledEnqueueTimeUtc`; {@link publishMany} packs
 *   messages with `createMessageBatch`.
 * - Consumes in PeekLock mode, the SDK renewing the lock of a message whose
 *   handler outlives it (`maxLockRenewalMs`) while the consume loop runs: the
 *   loop's receiver, and with it every renewal, is closed when the loop ends.
 *   A queue named in `sessionQueues` is read a session at a time per worker
 *   (see {@link sessionLoop}), the session lock renewed by the loop.
 * - Executes decisions: complete; abandon (native redelivery, the entity's
 *   MaxDeliveryCount moves it to `$DeadLetterQueue`); a delayed retry as a
 *   scheduled copy; records written to `<queue>.dlq` before completing; an
 *   explicit dead-letter with reason and description when dead-lettering is off.
 */
export class AzureServiceBusTransport implements Transport {
  readonly rules: BindingRules = ASB_RULES;
  readonly capabilities: TransportCapabilities = ASB_CAPABILITIES;
  readonly target: string;
  private readonly options: ResolvedOptions;
  private readonly connection: Connection;
  private readonly publisher: Publisher;
  private readonly lifecycle = new TransportLifecycle(BROKER);
  private connecting: Promise<void> | undefined;
  private opened = false;
  /** The last receive of a consume loop reached the namespace. */
  private reachable = true;

  constructor(options: AzureServiceBusTransportOptions) {
    const ways = [options.connectionString, options.url, options.fullyQualifiedNamespace, options.client].filter((v) => v !== undefined);
    if (ways.length !== 1) {
      throw new ConfigurationError('give exactly one of connectionString, url, fullyQualifiedNamespace (with a credential) or client');
    }
    this.options = resolveOptions(options);
    const source = options.connectionString ?? options.url;
    const address: AsbAddress | undefined = source === undefined ? undefined : parseAddress(source);
    this.connection = new Connection(address, options);
    this.publisher = new Publisher(this.connection, this.options);
    this.target = address !== undefined
      ? describeAddress(address)
      : options.fullyQualifiedNamespace !== undefined
        ? `sb://${options.fullyQualifiedNamespace} (token credential)`
        : `sb://${options.client!.fullyQualifiedNamespace} (client)`;
  }

  /**
   * Opens the AMQP connection (SASL, the CBS token) by attaching a sender. An
   * entity that does not exist still proves the namespace answers and accepted
   * the credentials. Refused credentials or an unknown host fail at once; a
   * namespace that does not answer yet (connection refused or reset) is tried
   * again until the deadline, which then names the last error.
   */
  connect(options: ConnectOptions): Promise<void> {
    this.lifecycle.assertOpen();
    this.connecting ??= connectWithin(this.target, options, async ({ signal, note }) => {
      const client = await this.connection.get();
      for (let attempt = 1; ; attempt++) {
        try {
          await probe(client, signal);
          this.opened = true;
          return;
        } catch (error) {
          if (signal.aborted || !isUnreachable(error)) throw error;
          note(error);
          await pause(reconnectDelayMs(CONNECT_RETRY_BACKOFF, attempt), signal);
        }
      }
    }).catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  /**
   * `connect` succeeded and the last receive of a consume loop reached the
   * namespace (the SDK reconnects by itself and exposes no connection state;
   * a receive fails while it cannot). False after `close()`. Session queues
   * are not tracked.
   */
  get connected(): boolean {
    return this.opened && !this.lifecycle.closed && this.reachable;
  }

  /** The queues' LockDuration (option `lockDurationMs`); the SDK renews it while a handler runs. */
  reservationMs(): number {
    return this.options.lockDurationMs;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    this.lifecycle.assertOpen();
    await this.publisher.send(message.queue, this.publisher.outgoing(message));
  }

  /**
   * Publishes a batch with `createMessageBatch`: per queue, in order, as few
   * batches as the namespace's size limit allows, each message exactly as
   * {@link publish} builds it (delays as `scheduledEnqueueTimeUtc`). A message
   * too large for an empty batch is refused alone; a batch the service refuses
   * fails the messages it carried.
   */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.lifecycle.assertOpen();
    return this.publisher.sendMany(messages);
  }

  async publishRaw(queue: string, body: Buffer, headers: Readonly<Record<string, string>> = {}): Promise<void> {
    this.lifecycle.assertOpen();
    await this.publisher.send(queue, this.publisher.raw(queue, body, headers));
  }

  /** Up to `max` bodies from the head of `queue` without locking them: the first records of {@link scan}. */
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
   * Reads the messages of `queue` from `offset` on without locking or
   * counting a delivery: `peekMessages` by sequence number, a batch at a time
   * (see {@link peekQueue}). Headers are the application properties.
   */
  async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    this.lifecycle.assertOpen();
    yield* peekQueue(await this.connection.get(), queue, options);
  }

  /**
   * How many messages {@link scan} would read, counted by peeking them all
   * (the runtime counts of the administration API need the Manage right and
   * its HTTP endpoint; a peek needs only Listen).
   */
  async depth(queue: string): Promise<number> {
    this.lifecycle.assertOpen();
    return countByPeeking(await this.connection.get(), queue);
  }

  /**
   * Receives and deletes every message waiting on `queue` (ReceiveAndDelete); scheduled ones
   * stay. A queue in `sessionQueues` is purged a session at a time: the sessions are found
   * by peeking, and one a consumer holds is left to it.
   */
  async purge(queue: string): Promise<number> {
    this.lifecycle.assertOpen();
    const client = await this.connection.get();
    // A fresh object per receiver: the SDK deletes `receiveMode` from the options it is given.
    const options = () => ({ receiveMode: 'receiveAndDelete', skipParsingBodyAsJson: true }) as const;
    if (!this.options.sessionQueues.has(queue.toLowerCase())) return receiveAll(client.createReceiver(queue, options()));
    let count = 0;
    for (const sessionId of await sessionIdsOf(client, queue)) {
      let receiver: ServiceBusReceiver;
      try {
        receiver = await client.acceptSession(queue, sessionId, options());
      } catch (error) {
        if (isServiceBusError(error) && error.code === 'SessionCannotBeLocked') continue;
        throw error;
      }
      count += await receiveAll(receiver);
    }
    return count;
  }

  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    // Async, so a closed transport rejects the call rather than throwing from it.
    this.lifecycle.assertOpen();
    const signal = AbortSignal.any([options.signal, this.lifecycle.signal]);
    return this.lifecycle.track(this.run(queue, onDelivery, { ...options, signal }));
  }

  /** Stops running consume loops (in-flight deliveries settle first), then closes the SDK's client. Idempotent. */
  close(): Promise<void> {
    return this.lifecycle.close(() => this.connection.close());
  }

  private async run(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    const client = await this.connection.get();
    const send = (target: string, message: ServiceBusMessage) => this.publisher.send(target, message);
    const { logger, receiveWaitMs, maxLockRenewalMs } = this.options;
    const sessionIdFor = (target: string, body: Buffer, projection: EnvelopeProjection | undefined) => this.options.sessionId({ queue: target, body, projection });
    const { partitionKey } = this.options;
    const toDelivery = (message: ServiceBusReceivedMessage, receiver: ServiceBusReceiver) => new AsbDelivery(queue, message, { receiver, send, sessionIdFor, partitionKey, logger });
    if (this.options.sessionQueues.has(queue.toLowerCase())) {
      const accept = () => client.acceptNextSession(queue, {
        receiveMode: 'peekLock',
        skipParsingBodyAsJson: true,
        // The loop renews the session lock itself, bounded per handler (see SessionLockKeeper).
        maxAutoLockRenewalDurationInMs: 0,
      });
      await sessionLoop({ accept, toDelivery, queue, logger, receiveWaitMs, maxLockRenewalMs }, onDelivery, options);
      return;
    }
    const openReceiver = () => client.createReceiver(queue, {
      receiveMode: 'peekLock',
      skipParsingBodyAsJson: true,
      maxAutoLockRenewalDurationInMs: this.options.maxLockRenewalMs,
    });
    const deps = {
      reached: (ok: boolean) => {
        this.reachable = ok;
      },
      openReceiver,
      toDelivery,
      queue,
      logger,
      receiveWaitMs,
    };
    // A drain (maxMessages, idleMs) pulls exactly what it may take; open-ended consumption streams.
    const drains = options.maxMessages !== undefined || options.idleMs !== undefined;
    await (drains ? consumeLoop : streamLoop)(deps, onDelivery, options);
  }
}
