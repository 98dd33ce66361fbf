import { ConfigurationError, type Logger } from '@babelqueue/core';
import type { KafkaMessage } from 'kafkajs';
import { KafkaConnection, type KafkaConnectionOptions } from './connection.js';
import { runConsumerLoop, describe, type ConsumerTuning } from './consume-loop.js';
import { KafkaHeader, editHeaders } from './projection.js';
import type { RecordResult } from './partition-batch.js';
import { originalTopicOf, reinjectDueAt } from './reinject-schedule.js';
import { parseRetryTopic, retryTiersOf, validateRetryTiers } from './retry-tiers.js';
import { ensureKafkaTopics } from './topics.js';
import { retryStart } from './start-retry.js';

/** Options of {@link KafkaReinjector}. */
export interface KafkaReinjectorOptions extends KafkaConnectionOptions, Partial<ConsumerTuning> {
  /** The work topic whose `<topic>.retry.<n>` tiers are drained. */
  readonly topic: string;
  /** The retry tiers (ms), as configured on the work consumer. Required, non-empty. */
  readonly retryTiersMs: readonly number[];
  /** Consumer group of the re-inject consumers. Default {@link DEFAULT_REINJECT_GROUP_ID}. */
  readonly groupId?: string;
  /** Create missing retry topics (LogAppendTime, retention above the largest tier) before consuming. Default true. */
  readonly createTopics?: boolean;
  /** Back-off before a record whose write failed is tried again (ms). Default 1000. */
  readonly redeliveryDelayMs?: number;
}

/** Options of {@link KafkaReinjector.run}. */
export interface ReinjectRunOptions {
  /** Aborting stops the consumer after in-flight writes were acknowledged and committed. */
  readonly signal: AbortSignal;
  /** Retry-topic partitions drained in parallel. Default: one per tier. */
  readonly concurrency?: number;
}

/**
 * The default consumer group of every re-inject consumer, the Python SDK's
 * default too: one group for all of them, so each retry-topic record is
 * re-injected once even when several services (or SDKs) consume the same work
 * topic. The `range` assigner keeps members with different topics apart.
 */
export const DEFAULT_REINJECT_GROUP_ID = 'babelqueue-retry-reinject';

/** Defaults of the consumer tuning. */
export const DEFAULT_CONSUMER_TUNING: ConsumerTuning = { maxWaitTimeMs: 100, commitIntervalMs: 1000, sessionTimeoutMs: 30_000 };

/**
 * The re-inject consumer of the retry tiers: without it, retried records sit
 * on the tier topics forever. For every record of `<topic>.retry.<n>` it
 *
 * 1. waits until `record.timestamp + tier_ms`, clamped to `[now, now + tier_ms]`,
 *    by pausing that partition (the poll loop keeps running);
 * 2. writes the value and key byte for byte to `bq-original-topic`, dropping
 *    `bq-delay` and `bq-original-topic` and keeping every other header
 *    (traceparent included);
 * 3. commits the retry-topic offset only after that write is acknowledged.
 *
 * It never decodes the value: poison is forwarded as is and handled by the
 * work consumer. {@link KafkaTransport} runs one beside every consume loop
 * when tiers are configured (`reinject: true`, the default); run one yourself
 * with this class when the work consumers run with `reinject: false`.
 */
export class KafkaReinjector {
  private readonly connection: KafkaConnection;
  private readonly ownsConnection: boolean;
  private readonly topic: string;
  private readonly tiers: readonly number[];
  private readonly groupId: string;
  private readonly createTopics: boolean;
  private readonly redeliveryDelayMs: number;
  private readonly tuning: ConsumerTuning;
  private readonly logger: Logger;
  /** Per retry-topic partition: the record waiting at its head and when it is due. */
  private readonly heads = new Map<string, { offset: string; due: number }>();

  /**
   * @param options what to drain and how to reach the cluster.
   * @param connection a client to share (the transport passes its own); when
   *   absent the re-injector creates one from `options` and `close` ends it.
   */
  constructor(options: KafkaReinjectorOptions, connection?: KafkaConnection) {
    this.tiers = validateRetryTiers(options.retryTiersMs);
    if (this.tiers.length === 0) throw new ConfigurationError('a re-inject consumer needs at least one retry tier');
    if (typeof options.topic !== 'string' || options.topic.trim() === '') {
      throw new ConfigurationError('a re-inject consumer needs the work topic name');
    }
    this.topic = options.topic;
    this.connection = connection ?? new KafkaConnection(options);
    this.ownsConnection = connection === undefined;
    this.logger = this.connection.logger;
    this.groupId = options.groupId ?? DEFAULT_REINJECT_GROUP_ID;
    this.createTopics = options.createTopics ?? true;
    this.redeliveryDelayMs = options.redeliveryDelayMs ?? 1000;
    this.tuning = {
      maxWaitTimeMs: options.maxWaitTimeMs ?? DEFAULT_CONSUMER_TUNING.maxWaitTimeMs,
      commitIntervalMs: options.commitIntervalMs ?? DEFAULT_CONSUMER_TUNING.commitIntervalMs,
      sessionTimeoutMs: options.sessionTimeoutMs ?? DEFAULT_CONSUMER_TUNING.sessionTimeoutMs,
    };
  }

  /** The tier topics this consumer drains. */
  get topics(): string[] {
    return retryTiersOf(this.topic, this.tiers).map((t) => t.topic);
  }

  /** Re-injects until the signal aborts. */
  async run(options: ReinjectRunOptions): Promise<void> {
    if (this.createTopics) {
      await retryStart(async () => ensureKafkaTopics(await this.connection.admin(), { topic: this.topic, retryTiersMs: this.tiers, work: false }), options.signal, this.logger, 'retry topics');
    }
    this.logger.info({ topics: this.topics, groupId: this.groupId }, 'Kafka re-inject consumer started');
    try {
      await runConsumerLoop({
        ...this.tuning,
        kafka: this.connection.kafka,
        groupId: this.groupId,
        topics: this.topics,
        concurrency: options.concurrency ?? this.tiers.length,
        // A partition's records are due in order (LogAppendTime): wait on the head, never skip past it.
        ordering: 'partition',
        signal: options.signal,
        logger: this.logger,
        handle: (record, topic, partition) => this.reinject(record, topic, partition),
      });
    } finally {
      this.logger.info({ topics: this.topics }, 'Kafka re-inject consumer stopped');
    }
  }

  /** Disconnects the client when this re-injector created it. */
  async close(): Promise<void> {
    if (this.ownsConnection) await this.connection.close();
  }

  private async reinject(record: KafkaMessage, topic: string, partition: number): Promise<RecordResult> {
    const where = { topic, partition, offset: record.offset };
    const now = Date.now();
    const due = this.dueAt(record, topic, partition, now);
    if (due > now) return { kind: 'hold', resumeInMs: due - now };

    const target = originalTopicOf(record.headers, this.topic);
    try {
      await this.connection.write({
        topic: target,
        value: record.value,
        key: record.key,
        headers: editHeaders(record.headers, {}, [KafkaHeader.DELAY, KafkaHeader.ORIGINAL_TOPIC]),
      });
    } catch (error) {
      this.logger.error({ ...where, target, error: describe(error) }, 're-inject write failed; the record stays uncommitted and is tried again');
      return { kind: 'hold', resumeInMs: this.redeliveryDelayMs };
    }
    this.logger.debug({ ...where, target }, 're-injected');
    return { kind: 'settled' };
  }

  /**
   * The due time of a partition's head record, computed once when it is first
   * seen: recomputing the clamp on every refetch would push a record with a
   * future timestamp back by a tier each time.
   */
  private dueAt(record: KafkaMessage, topic: string, partition: number, now: number): number {
    const key = `${topic}\u0000${partition}`;
    const known = this.heads.get(key);
    if (known !== undefined && known.offset === record.offset) return known.due;
    // The tier decides the delay: the configured delay of the tier this topic is.
    const tierMs = this.tiers[(parseRetryTopic(topic)?.index ?? 1) - 1] ?? 0;
    const due = reinjectDueAt(Number(record.timestamp), tierMs, now);
    this.heads.set(key, { offset: record.offset, due });
    return due;
  }
}
