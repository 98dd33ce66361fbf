import { randomBytes } from 'node:crypto';
import type { Logger } from '@babelqueue/core';
import { isConfigurationFailure } from '../connection.js';
import { errorText } from '../errors.js';
import type { ConsumerCommand } from '../frames.js';
import { keepSubscribed } from '../keep-subscribed.js';
import type { ConsumerOwner, LoopConsumer, Received } from '../loop-consumer.js';
import type { ResolvedOptions } from '../options.js';
import type { BrokerAddress, BrokerConnection } from './broker-connection.js';
import * as cmd from './commands.js';
import type { Incoming, MessageId } from './commands.js';
import { readEntry, UnreadableEntryError, type Entry, type EntryMessage } from './entry.js';
import type { MessagePayload } from './frames.js';
import { connectToOwner, partitionsOf } from './lookup.js';

/** The topic is partitioned: the binary consumer reads one topic, so the loop consumes it over the WebSocket API. */
export class PartitionedTopicError extends Error {
  override readonly name = 'PartitionedTopicError';
}

/** Consumer ids are per connection; one counter for the process keeps them apart. */
let lastConsumerId = 0;

/** Where each message of a batch stands; `due`: not handed over (yet, or again after a redelivery request). */
type Batched = 'due' | 'handed' | 'acked' | 'nacked';

/**
 * A producer's batch: one entry on the broker, acknowledged once every
 * message of it is; while one is negatively acknowledged, the entry is asked
 * back and only the messages not acknowledged are handed over again.
 */
interface BatchEntry {
  readonly id: MessageId;
  readonly states: Batched[];
}

/** What a message id handed to the loop settles. */
interface Handle {
  readonly id: MessageId;
  readonly batch?: BatchEntry;
  readonly index: number;
}

/**
 * A consumer on Pulsar's binary protocol: one TCP connection to the broker
 * that owns the topic, one subscription, permits for the loop's free slots.
 * A consumer whose process dies takes its connection with it, and the broker
 * hands everything it had not acknowledged to the other consumers: nothing
 * stays with a consumer nobody owns (as it can in the WebSocket service,
 * apache/pulsar#4098), so it prefetches up to its capacity.
 *
 * Settlements are by message id, grouped: the acknowledgements and permits
 * of one turn of the event loop leave in one ACK and one FLOW. A producer's
 * batch is one entry on the broker, sent whole on one permit: its messages
 * wait here for free slots, it is acknowledged once every message of it was,
 * and asked back (after the negative-acknowledgement delay) when one was
 * negatively acknowledged. An entry the binding cannot read (a compression
 * this Node lacks, encryption, chunking, a bad checksum) is logged, never
 * acknowledged, and asked back after that delay.
 */
export class BinaryConsumer implements LoopConsumer {
  outstanding = 0;
  inFlight = 0;
  name: string | undefined;
  lastActivity = 0;
  private connection: BrokerConnection | undefined;
  private consumerId = 0;
  private subscribed = false;
  private checkedPartitions = false;
  /** Message ids handed to the loop and not settled yet. */
  private readonly handles = new Map<string, Handle>();
  /** Batches not acknowledged yet, by entry. */
  private readonly batches = new Map<string, BatchEntry>();
  /**
   * Messages received and not handed over yet: a batch comes whole on one
   * permit, and the loop takes no more than its free slots.
   */
  private waiting: Received[] = [];
  private handingOver = false;
  private acks: MessageId[] = [];
  private permits = 0;
  private flushQueued = false;
  private readonly redeliveries = new Set<NodeJS.Timeout>();

  constructor(
    private readonly service: BrokerAddress,
    private readonly options: ResolvedOptions,
    private readonly logger: Logger,
    private readonly queue: string,
    private readonly topic: string,
    readonly capacity: number,
    private readonly owner: ConsumerOwner,
  ) {}

  get queueSize(): number {
    return this.capacity;
  }

  get open(): boolean {
    return this.subscribed && this.connection !== undefined && this.connection.isOpen;
  }

  async run(stopping: AbortSignal): Promise<void> {
    await keepSubscribed(this, this.owner, {
      open: () => this.subscribe(),
      refused: (error, connectedBefore) => {
        if (error instanceof PartitionedTopicError) throw error;
        if (!connectedBefore && isConfigurationFailure(error)) throw error;
        return false;
      },
      attach: (connection) => {
        this.attach(connection);
        return connection.closed;
      },
      detach: () => this.detach(),
      discard: (late) => late.close(),
    }, stopping, { logger: this.logger, queue: this.queue, reconnect: this.options.reconnect, what: 'Pulsar consumer connection' });
  }

  async close(): Promise<void> {
    const connection = this.connection;
    if (connection === undefined) return;
    this.flush();
    for (const timer of this.redeliveries) clearTimeout(timer);
    this.redeliveries.clear();
    if (this.open) {
      const consumerId = this.consumerId;
      const closing = connection.request((id) => cmd.closeConsumer(consumerId, id)).catch(() => undefined);
      await Promise.race([closing, delay(2000)]);
    }
    this.detach();
    connection.close();
    await Promise.race([connection.closed, delay(2000)]);
    connection.destroy();
  }

  /** Hands over what waits while there are free slots, then tops the broker's permits up to the rest. */
  grant(): void {
    this.handOver();
    if (!this.open) return;
    const want = this.owner.wanted(this) - this.outstanding - this.waiting.length;
    if (want <= 0) return;
    this.outstanding += want;
    this.permits += want;
    this.queueFlush();
  }

  command(command: ConsumerCommand): boolean {
    if (!this.open) return false;
    if (!('messageId' in command)) throw new Error(`a binary-protocol consumer takes no ${command.type} command`);
    this.settle(command.messageId, !('type' in command));
    return true;
  }

  drop(): void {
    this.connection?.destroy();
  }

  /** A MESSAGE for the current subscription: its entry is read and its messages wait for free slots. */
  private message(command: Incoming, payload: MessagePayload): void {
    const id = command.messageId;
    if (id === undefined) return;
    this.lastActivity = Date.now();
    let entry: Entry;
    try {
      entry = readEntry(payload.metadata, payload.data, payload.checksumOk);
    } catch (error) {
      this.outstanding -= error instanceof UnreadableEntryError ? error.permits : 1;
      this.logger.error(
        { queue: this.queue, error: errorText(error) },
        'cannot read a message from Pulsar; it is left unacknowledged and redelivered after the negative-acknowledgement delay',
      );
      this.redeliverLater(id);
      this.grant();
      return;
    }
    // The broker counts a batch's messages against the permits, and sends a
    // whole batch on one permit: the count may go below zero, a debt the next
    // permits pay off.
    this.outstanding -= entry.messages.length;
    const redeliveryCount = command.redeliveryCount ?? 0;
    if (!entry.batched) {
      const [message] = entry.messages as [EntryMessage];
      const messageId = cmd.encodeMessageId(id).toString('base64');
      this.handles.set(messageId, { id, index: -1 });
      this.waiting.push({ messageId, body: message.body, properties: message.properties, publishTime: message.publishTime, redeliveryCount });
      this.grant();
      return;
    }
    const key = entryKey(id);
    let batch = this.batches.get(key);
    if (batch === undefined) {
      batch = { id: { ...id, batchIndex: -1 }, states: entry.messages.map((): Batched => 'due') };
      this.batches.set(key, batch);
    }
    if (entry.messages.length === 0) {
      this.logger.warn({ queue: this.queue }, 'a Pulsar batch with no messages in it; acknowledged');
      this.settleBatch(key, batch);
      return;
    }
    for (let index = 0; index < entry.messages.length; index++) {
      const message = entry.messages[index] as EntryMessage;
      // A redelivered batch: a message acknowledged since it first came is not handed over again.
      if (batch.states[index] === 'acked') continue;
      batch.states[index] = 'handed';
      const messageId = cmd.encodeMessageId({ ...id, batchIndex: index }).toString('base64');
      this.handles.set(messageId, { id, batch, index });
      this.waiting.push({ messageId, body: message.body, properties: message.properties, publishTime: message.publishTime, redeliveryCount });
    }
    this.grant();
  }

  private async subscribe(): Promise<BrokerConnection> {
    const connection = await connectToOwner(this.service, this.topic);
    try {
      if (!this.checkedPartitions) {
        if ((await partitionsOf(connection, this.topic)) > 0) throw new PartitionedTopicError(`${this.topic} is partitioned`);
        this.checkedPartitions = true;
      }
      const consumerId = ++lastConsumerId;
      const name = `babelqueue-${randomBytes(6).toString('hex')}`;
      connection.addConsumer(consumerId, {
        message: (command, payload) => this.message(command, payload),
        // Closed by the broker (the topic moved, was unloaded, its subscription
        // fenced), whenever it comes: during the subscribe as well as after it.
        // This connection goes, and the consumer looks the topic up again.
        closedByBroker: () => {
          this.logger.info({ queue: this.queue }, 'Pulsar closed the consumer (the topic moved or was unloaded); subscribing again');
          connection.destroy();
        },
      });
      await connection.request((requestId) => cmd.subscribe({
        topic: this.topic,
        subscription: this.options.subscription,
        subType: this.options.subscriptionType,
        consumerId,
        requestId,
        consumerName: name,
        earliest: this.options.initialPosition === 'earliest',
      }));
      this.consumerId = consumerId;
      this.name = name;
      return connection;
    } catch (error) {
      connection.close();
      throw error;
    }
  }

  private attach(connection: BrokerConnection): void {
    this.connection = connection;
    this.subscribed = true;
    this.outstanding = 0;
    this.permits = 0;
    this.lastActivity = Date.now();
    this.grant();
  }

  /** Hands waiting messages to the loop while it has free slots (the loop counts each one it takes in `inFlight`). */
  private handOver(): void {
    if (this.handingOver) return; // the loop grants again from inside a receive
    this.handingOver = true;
    try {
      while (this.waiting.length > 0 && this.inFlight < this.capacity) {
        this.owner.receive(this, this.waiting.shift() as Received);
      }
    } finally {
      this.handingOver = false;
    }
  }

  private detach(): void {
    // What waits came on the lost connection: the broker redelivers it.
    this.waiting = [];
    this.subscribed = false;
    this.connection?.removeConsumer(this.consumerId);
  }

  private settle(messageId: string, ok: boolean): void {
    const handle = this.handles.get(messageId);
    if (handle === undefined) return;
    this.handles.delete(messageId);
    const { batch } = handle;
    if (batch === undefined) {
      if (ok) this.acks.push(handle.id);
      else this.redeliverLater(handle.id);
      if (ok) this.queueFlush();
      return;
    }
    batch.states[handle.index] = ok ? 'acked' : 'nacked';
    this.settleBatch(entryKey(handle.id), batch);
  }

  /**
   * Once no message of a batch is being handled: every one acknowledged
   * acknowledges the entry; otherwise the entry is asked back, and its
   * negatively acknowledged messages are due again.
   */
  private settleBatch(key: string, batch: BatchEntry): void {
    const { states } = batch;
    if (states.includes('handed')) return;
    if (states.every((state) => state === 'acked')) {
      this.batches.delete(key);
      this.acks.push(batch.id);
      this.queueFlush();
      return;
    }
    if (!states.includes('nacked')) return; // due ones are on their way back already
    for (let i = 0; i < states.length; i++) if (states[i] === 'nacked') states[i] = 'due';
    this.redeliverLater(batch.id);
  }

  /** Asks the broker to redeliver an entry once the negative-acknowledgement delay has passed. */
  private redeliverLater(id: MessageId): void {
    const timer = setTimeout(() => {
      this.redeliveries.delete(timer);
      if (this.open) this.connection?.send(cmd.redeliver(this.consumerId, [id]));
    }, this.options.negativeAckRedeliveryDelayMs);
    this.redeliveries.add(timer);
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => this.flush());
  }

  /** Sends the grouped acknowledgements, then the permits. */
  private flush(): void {
    this.flushQueued = false;
    const connection = this.connection;
    if (connection === undefined || !this.open) return;
    if (this.acks.length > 0) {
      connection.send(cmd.ack(this.consumerId, this.acks));
      this.acks = [];
    }
    if (this.permits > 0) {
      connection.send(cmd.flow(this.consumerId, this.permits));
      this.permits = 0;
    }
  }
}

function entryKey(id: MessageId): string {
  return `${id.ledgerId}:${id.entryId}:${id.partition}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
