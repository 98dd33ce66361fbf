import { ListQueuesCommand, type Message } from '@aws-sdk/client-sqs';
import {
  consoleLogger,
  pause,
  reconnectDelayMs,
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
  indexesByQueue,
  projectSqs,
  TransportLifecycle,
  type BindingRules,
  type Delivery,
  type RawPublishOptions,
} from '@babelqueue/core/binding';
import { riderAttributes } from './projection.js';
import { describe, isFatalClientError, isQueueMissing } from './aws-errors.js';
import { browseQueue, isDeadLetterQueueName, purgeQueue, queueDepth, removeFromQueue, scanQueue } from './scan.js';
import { Connection } from './connection.js';
import { consumeLoop } from './consume-loop.js';
import { deadLetterOutgoing } from './dead-letter.js';
import { BROKER, QueueNotFoundError, WorkQueueBrowseError } from './errors.js';
import { resolveOptions, type ResolvedOptions, type SqsTransportOptions } from './options.js';
import { QueueDirectory, type QueueInfo } from './queues.js';
import { SQS_CAPABILITIES, SQS_RULES } from './rules.js';
import { Sender, type Outgoing } from './publisher.js';
import { CALL_RETRY_BACKOFF } from './retry.js';
import { SettleBatcher } from './settle-batcher.js';

/**
 * The Amazon SQS binding over `@aws-sdk/client-sqs`.
 *
 * - Publishes the envelope bytes as the MessageBody with the native projection
 *   as MessageAttributes (`bq-job`, `bq-trace-id`, `bq-message-id`,
 *   `bq-source-lang` String; `bq-schema-version`, `bq-created-at` Number;
 *   riders such as `traceparent` as String, ten attributes at most). FIFO
 *   queues get `MessageGroupId` and `MessageDeduplicationId` = `meta.id`.
 *   Delays ride `DelaySeconds`. What SQS would refuse is refused first, with
 *   the reason: a delay over 900 s or on a FIFO queue, a message over the
 *   queue's maximum size, a body that is not valid UTF-8.
 * - Consumes by long polling, the visibility timeout as the reservation,
 *   renewed by a heartbeat while the handler runs; settles as
 *   the delivery (`delivery.ts`) says (delete, release, DLQ write then delete, or
 *   leave it to the visibility timeout and the queue's RedrivePolicy).
 */
export class SqsTransport implements Transport {
  readonly rules: BindingRules = SQS_RULES;
  readonly capabilities: TransportCapabilities = SQS_CAPABILITIES;
  readonly target: string;
  private readonly options: ResolvedOptions;
  private readonly connection: Connection;
  private readonly queues: QueueDirectory;
  private readonly sender: Sender;
  private readonly batcher: SettleBatcher;
  private readonly lifecycle = new TransportLifecycle(BROKER);
  /** Queues already warned about (no RedrivePolicy while dead-lettering is off): once per queue. */
  private readonly warnedNoRedrive = new Set<string>();

  constructor(options: SqsTransportOptions = {}) {
    this.options = resolveOptions(options, options.logger ?? consoleLogger());
    this.connection = new Connection(options, this.options);
    this.target = this.connection.target;
    this.queues = new QueueDirectory(this.connection.client, this.options);
    this.sender = new Sender(this.connection.client, this.queues, this.options);
    this.batcher = new SettleBatcher(this.connection.client);
  }

  /** The last SQS request got an answer (see `Connection.reached`); false after `close()`. */
  get connected(): boolean {
    return !this.lifecycle.closed && this.connection.reached;
  }

  /** The visible messages of `queue` ({@link depth}): in-flight and delayed ones are not counted. */
  readyCount(queue: string): Promise<number> {
    return this.depth(queue);
  }

  /**
   * Verifies the endpoint, region and credentials with one signed request.
   * Missing or refused credentials, a missing region and an unknown host fail
   * at once; an endpoint that does not answer fails when `timeoutMs` runs out,
   * naming the last error. Given the queue about to be consumed
   * (`options.queue`), it then looks the queue up (creating it with
   * `createQueues`), so a missing queue rejects with {@link QueueNotFoundError}
   * before the worker says it is consuming.
   */
  async connect(options: ConnectOptions): Promise<void> {
    this.lifecycle.assertOpen();
    await this.connection.verify(options);
    if (options.queue !== undefined) await this.lookUpToConsume(options.queue, options.signal ?? this.lifecycle.signal);
  }

  /** The visibility timeout each receive asks for (the same for every queue): the reservation the heartbeat renews. */
  reservationMs(_queue?: string): number {
    return this.options.visibilityTimeoutSeconds * 1000;
  }

  /**
   * Sends one envelope; resolves once SQS has it. On a FIFO queue the group is
   * the message's `key` (UTF-8), else the `messageGroupId` option, else the
   * queue name.
   */
  async publish(message: OutgoingMessage): Promise<void> {
    this.lifecycle.assertOpen();
    await this.sender.send(message.queue, outgoingOf(message));
  }

  /**
   * Sends many envelopes with `SendMessageBatch`: ten per call (and 1 MiB per
   * call), calls to one queue in parallel (one after the other on a FIFO queue,
   * so the order is kept). Resolves with one result per
   * message, in order, and never rejects for one message: a message refused
   * before sending (too large, a delay SQS cannot carry), failed by SQS in the
   * batch, or in a call that failed as a whole is `ok: false` with the reason,
   * so nothing is silently lost.
   */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.lifecycle.assertOpen();
    const results: PublishOutcome[] = new Array(messages.length);
    await Promise.all([...indexesByQueue(messages)].map(async ([queue, indexes]) => {
      const outcomes = await this.sender.sendMany(queue, indexes.map((i) => outgoingOf(messages[i]!)));
      outcomes.forEach((outcome, k) => {
        const index = indexes[k]!;
        const messageId = messages[index]!.projection.messageId;
        results[index] = outcome.ok ? { ok: true, messageId } : { ok: false, messageId, error: outcome.error };
      });
    }));
    return results;
  }

  /**
   * Sends `body` as is to `queue` (a DLQ record, a redrive); `headers` ride
   * String attributes. On a FIFO queue the group is `options.key`, else the
   * `messageGroupId` option, else the queue name, and every call gets a fresh
   * deduplication id (a record written back twice is never deduplicated away).
   */
  async publishRaw(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>, options: RawPublishOptions = {}): Promise<void> {
    this.lifecycle.assertOpen();
    await this.sender.send(queue, {
      body,
      attributes: riderAttributes(headers),
      ...(options.key !== undefined && options.key !== null ? { groupId: options.key.toString('utf8') } : {}),
    });
  }

  /**
   * Reads up to `max` bodies without consuming them; see {@link browseQueue}.
   * An absent queue reads as empty. Only a dead-letter queue
   * (`<queue>-dlq`, `<queue>-dlq.fifo`) unless `browseWorkQueues`: any other
   * is refused with {@link WorkQueueBrowseError}, since a read is a receive
   * and a receive costs a work queue's message an attempt.
   */
  async browse(queue: string, max: number): Promise<Buffer[]> {
    this.lifecycle.assertOpen();
    this.assertBrowsable(queue, 'browse');
    return this.onQueue(queue, (info) => browseQueue(this.tools(), info, max), []);
  }

  /**
   * Reads the visible messages of `queue` without consuming them; see
   * {@link scanQueue}: a leased read (`capabilities.scan` is `leased`), each
   * message received and given back when the iteration ends. Only a
   * dead-letter queue unless `browseWorkQueues`, as {@link browse}. An absent
   * queue reads as empty.
   */
  async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    this.lifecycle.assertOpen();
    this.assertBrowsable(queue, 'scan');
    const info = await this.onQueue(queue, async (found) => found, undefined);
    if (info !== undefined) yield* scanQueue(this.tools(), info, options);
  }

  /** Every queue of the account and region (`ListQueues`, page by page), by name. */
  async listQueues(): Promise<string[]> {
    this.lifecycle.assertOpen();
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.connection.client.send(new ListQueuesCommand({ MaxResults: 1000, ...(token !== undefined ? { NextToken: token } : {}) }));
      for (const url of page.QueueUrls ?? []) names.push(url.slice(url.lastIndexOf('/') + 1));
      token = page.NextToken;
    } while (token !== undefined);
    return names;
  }

  /**
   * How many messages wait visible on `queue` (`ApproximateNumberOfMessages`,
   * an estimate on a busy queue); see {@link queueDepth}. An absent queue: 0.
   */
  async depth(queue: string): Promise<number> {
    this.lifecycle.assertOpen();
    return this.onQueue(queue, (info) => queueDepth(this.tools(), info), 0);
  }

  /**
   * Deletes one message whose body is `body` byte for byte; see
   * {@link removeFromQueue}. False when none is there. Only on a dead-letter
   * queue unless `browseWorkQueues`, as {@link browse}: the messages it passes
   * on the way are received.
   */
  async remove(queue: string, body: Buffer): Promise<boolean> {
    this.lifecycle.assertOpen();
    this.assertBrowsable(queue, 'remove');
    return this.onQueue(queue, (info) => removeFromQueue(this.tools(), info, body), false);
  }

  /** Deletes every visible message of `queue`; resolves with how many. See {@link purgeQueue}. An absent queue purges 0. */
  async purge(queue: string): Promise<number> {
    this.lifecycle.assertOpen();
    return this.onQueue(queue, (info) => purgeQueue(this.tools(), info), 0);
  }

  /**
   * Writes the dead-letter record of a message received outside this
   * transport's consume loop (by an AWS Lambda event source mapping:
   * `@babelqueue/aws-lambda`) to `queue`, exactly as a consumed message's
   * record is written: the projection of the record's own bytes beside the
   * message's riders (a version-gated record: the message's attributes without
   * `bq-schema-version`), its FIFO group, and its `MessageId` as the FIFO
   * deduplication id. Resolves once SQS has it; the message itself is not
   * touched (deleting it is the caller's).
   */
  async writeDeadLetter(queue: string, record: Buffer, received: Message, options: { readonly versionGated?: boolean } = {}): Promise<void> {
    this.lifecycle.assertOpen();
    await this.sender.send(queue, deadLetterOutgoing(record, received, options.versionGated === true));
  }

  /**
   * `ChangeMessageVisibility` of a message received outside this transport's
   * consume loop (an AWS Lambda event source mapping): it reappears on `queue`
   * after `seconds` (0: at once), as a retry's release does here.
   */
  async changeVisibility(queue: string, receiptHandle: string, seconds: number): Promise<void> {
    this.lifecycle.assertOpen();
    const info = await this.queues.get(queue, false);
    await this.batcher.changeVisibility(info.url, receiptHandle, seconds);
  }

  /**
   * Consumes `queue` until the signal aborts or a drain limit is reached; see
   * {@link consumeLoop}. Rejects with {@link QueueNotFoundError} when the queue
   * does not exist (unless `createQueues`).
   */
  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    this.lifecycle.assertOpen();
    const info = await this.lookUpToConsume(queue, options.signal);
    if (info === undefined) return;
    if (options.deadLettering === false && info.redrivePolicy === false) this.warnNoRedrivePolicy(queue);
    const run = consumeLoop({
      client: this.connection.client,
      queue: info,
      batcher: this.batcher,
      sender: this.sender,
      options: this.options,
      logger: this.options.logger,
      closing: this.lifecycle.signal,
    }, onDelivery, options);
    try {
      await this.lifecycle.track(run);
    } catch (error) {
      if (isQueueMissing(error)) this.queues.forget(queue);
      throw error;
    }
  }

  /**
   * Cancels the receives in flight, lets handed-over deliveries settle, then
   * frees the client. Idempotent; never waits on an unreachable endpoint
   * longer than the settlements in flight take to fail.
   */
  close(): Promise<void> {
    return this.lifecycle.close(() => {
      this.sender.flush();
      this.connection.destroy();
    });
  }

  /**
   * The queue's look-up as consuming starts, tried again on a transient error
   * (a dropped connection, a 5xx) exactly as a failed receive is: a connection
   * cut at that moment must not end the worker. A missing queue or a refused
   * client fails at once. Undefined when the stop signal or close() came first.
   */
  private async lookUpToConsume(queue: string, signal: AbortSignal): Promise<QueueInfo | undefined> {
    for (let failures = 1; ; failures++) {
      try {
        return await this.queues.get(queue);
      } catch (error) {
        if (error instanceof QueueNotFoundError || isQueueMissing(error) || isFatalClientError(error)) throw error;
        if (signal.aborted || this.lifecycle.signal.aborted) return undefined;
        const pauseMs = reconnectDelayMs(CALL_RETRY_BACKOFF, failures);
        this.options.logger.warn({ queue, error: describe(error), retryInMs: pauseMs }, 'queue look-up failed; trying again');
        await pause(pauseMs, signal, this.lifecycle.signal);
        if (signal.aborted || this.lifecycle.signal.aborted) return undefined;
      }
    }
  }

  /**
   * With dead-lettering off, poison and version-gated messages are left to
   * SQS (seed 000): without a RedrivePolicy the queue redelivers them until
   * its retention period ends. Said once per queue, when consuming starts.
   */
  private warnNoRedrivePolicy(queue: string): void {
    if (this.warnedNoRedrive.has(queue)) return;
    this.warnedNoRedrive.add(queue);
    this.options.logger.warn({ queue },
      `SQS queue ${queue} has no RedrivePolicy and dead-lettering is off: a poison or version-gated message is left to SQS, which redelivers it until the queue's retention period ends; configure a RedrivePolicy (maxReceiveCount and a dead-letter queue) on every consumed queue, or pass deadLetter: true`);
  }

  private assertBrowsable(queue: string, operation: 'browse' | 'scan' | 'remove'): void {
    if (!this.options.browseWorkQueues && !isDeadLetterQueueName(queue)) throw new WorkQueueBrowseError(queue, operation);
  }

  private tools() {
    return { client: this.connection.client, batcher: this.batcher, logger: this.options.logger };
  }

  /** Runs a tool on an existing queue (never creating one); an absent queue gives `absent`. */
  private async onQueue<T>(queue: string, use: (info: QueueInfo) => Promise<T>, absent: T): Promise<T> {
    let info: QueueInfo;
    try {
      info = await this.queues.get(queue, false);
    } catch (error) {
      if (error instanceof QueueNotFoundError) return absent;
      throw error;
    }
    return use(info);
  }
}

function outgoingOf(message: OutgoingMessage): Outgoing {
  return {
    body: message.body,
    attributes: projectSqs(message.projection, message.headers),
    ...(message.key !== undefined && message.key !== null ? { groupId: message.key.toString('utf8') } : {}),
    ...(message.projection.messageId.trim() !== '' ? { deduplicationId: message.projection.messageId } : {}),
    ...(message.delayMs !== undefined ? { delayMs: message.delayMs } : {}),
  };
}
