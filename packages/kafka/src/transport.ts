import {
  ConfigurationError,
  DLQ_SUFFIX,
  dlqName,
  TransportClosedError,
  type ConnectOptions,
  type ConsumeOptions,
  type Logger,
  type OutgoingMessage,
  type PublishOutcome,
  type ScannedRecord,
  type ScanOptions,
  type Transport,
  type TransportCapabilities,
} from '@babelqueue/core';
import {
  connectWithin,
  outcomesOf,
  projectKafka,
  type Delivery,
  type RawPublishOptions,
} from '@babelqueue/core/binding';
import type { KafkaMessage } from 'kafkajs';
import { KafkaConnection, type KafkaRecord } from './connection.js';
import { describe, runConsumerLoop, type ConsumerTuning } from './consume-loop.js';
import { DrainWatch } from './drain-watch.js';
import { KafkaHeader } from './projection.js';
import { KafkaDelivery, type RecordWrite } from './delivery.js';
import { SETTLED, type Ordering, type RecordResult } from './partition-batch.js';
import { DEFAULT_REINJECT_GROUP_ID, KafkaReinjector } from './reinjector.js';
import { resolveOrdering, resolveRedeliveryDelayMs, resolveTuning, type KafkaTransportOptions } from './options.js';
import { KAFKA_RULES, kafkaCapabilities } from './rules.js';
import { tierForDelay, validateRetryTiers } from './retry-tiers.js';
import { scanTopic, waitingRanges } from './scan.js';
import { ensureKafkaTopics } from './topics.js';
import { retryStart } from './start-retry.js';
import { parseKafkaUrl } from './url.js';

/**
 * Apache Kafka transport over kafkajs.
 *
 * - Produce: value = the envelope bytes; `bq-` headers (UTF-8 strings) plus
 *   riders; record timestamp = `meta.created_at`; the key byte for byte.
 * - Consume: manual commit, process-then-commit: an offset is committed once
 *   its record and every earlier one of the partition settled; `concurrency`
 *   records in flight, `ordering` says which may run together. The version
 *   gate reads `bq-schema-version`; attempts = the `bq-attempts` header, else
 *   the body's.
 * - Retry: `<topic>.retry.<n>` tiers (opt-in) with the re-inject consumer;
 *   dead-letter: `<topic>.dlq`. Keys are carried byte for byte everywhere.
 */
export class KafkaTransport implements Transport {
  readonly rules = KAFKA_RULES;
  readonly capabilities: TransportCapabilities;
  readonly target: string;
  /** The configured retry tiers (empty when off). */
  readonly retryTiersMs: readonly number[];
  readonly groupId: string;
  private readonly connection: KafkaConnection;
  private readonly options: KafkaTransportOptions;
  private readonly tuning: ConsumerTuning;
  private readonly redeliveryDelayMs: number;
  private readonly ordering: Ordering;
  private readonly running = new Set<AbortController>();
  private readonly loops = new Set<Promise<unknown>>();
  /** Consume loops whose consumer is in its group now (joined, not crashed or disconnected since). */
  private members = 0;
  private closed = false;

  constructor(options: KafkaTransportOptions) {
    const fromUrl = options.url !== undefined ? parseKafkaUrl(options.url) : undefined;
    this.options = options;
    this.connection = new KafkaConnection(options);
    this.groupId = options.groupId ?? fromUrl?.groupId ?? 'babelqueue';
    this.retryTiersMs = validateRetryTiers(options.retryTiersMs ?? fromUrl?.retryTiersMs ?? []);
    const tiers = this.retryTiersMs.length > 0;
    this.capabilities = kafkaCapabilities(tiers);
    this.target = options.url !== undefined
      ? options.url.replace(/\/\/[^@/]*@/, '//***@')
      : `kafka://${(options.brokers ?? []).join(',')}`;
    this.redeliveryDelayMs = resolveRedeliveryDelayMs(options);
    this.ordering = resolveOrdering(options, fromUrl);
    this.tuning = resolveTuning(options);
  }

  private get logger(): Logger {
    return this.connection.logger;
  }

  /**
   * Asks the cluster to describe itself through the admin client. Refused SASL
   * credentials fail at once; unreachable brokers fail once kafkajs' own
   * retries or `timeoutMs` run out, whichever comes first.
   */
  async connect(options: ConnectOptions): Promise<void> {
    await connectWithin(this.target, options, async () => {
      const admin = await this.connection.admin();
      await admin.describeCluster();
    });
  }

  /**
   * Publishes one envelope. A delay goes to the smallest retry tier whose
   * delay covers it (the re-inject consumer brings it back); without tiers, or
   * above the largest tier, the publish is refused.
   */
  async publish(message: OutgoingMessage): Promise<void> {
    this.assertOpen();
    await this.connection.write(this.record(message));
  }

  /**
   * Publishes a batch in one produce call (`sendBatch`, acks=all): each record
   * exactly as {@link publish} builds it, delays to their tiers. A delay no
   * tier covers is refused for that message alone; a failed call fails every
   * message it carried (on a cluster, records bound for another broker may
   * have been written all the same: a retry can duplicate them).
   */
  async publishMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    this.assertOpen();
    // Each message's failure at its index (outcomesOf); a hole is a message that went through.
    const failures: unknown[] = new Array(messages.length);
    const records: KafkaRecord[] = [];
    for (let index = 0; index < messages.length; index += 1) {
      try {
        records.push(this.record(messages[index]!));
      } catch (error) {
        failures[index] = error ?? new Error('the record could not be built');
      }
    }
    if (records.length > 0) {
      try {
        await this.connection.writeMany(records);
      } catch (error) {
        const reason = error ?? new Error('the produce call failed');
        // Every message the call carried failed; a message refused before it keeps its own reason.
        for (let index = 0; index < messages.length; index += 1) failures[index] ??= reason;
      }
    }
    return outcomesOf(messages, failures);
  }

  /** The record {@link publish} writes for `message`; a delay no tier covers throws. */
  private record(message: OutgoingMessage): KafkaRecord {
    const { headers, timestamp } = projectKafka(message.projection, message.headers);
    let topic = message.queue;
    const delayMs = message.delayMs ?? 0;
    if (delayMs > 0) {
      const tier = tierForDelay(message.queue, this.retryTiersMs, delayMs);
      topic = tier.topic;
      headers[KafkaHeader.DELAY] = String(tier.delayMs);
      headers[KafkaHeader.ORIGINAL_TOPIC] = message.queue;
    }
    const record: KafkaRecord = { topic, value: message.body, key: message.key ?? null, headers };
    if (timestamp !== undefined) record.timestamp = timestamp;
    return record;
  }

  /**
   * Writes a record as is (tools, redrive): `body` and `headers` unchanged,
   * `key` byte for byte (null when not given); with `nullValue` the value is
   * null (a tombstone written back as one), and `body` must be empty.
   */
  async publishRaw(
    queue: string,
    body: Buffer,
    headers: Readonly<Record<string, string>> = {},
    options: RawPublishOptions = {},
  ): Promise<void> {
    this.assertOpen();
    if (options.nullValue === true && body.length > 0) {
      throw new ConfigurationError(`publishRaw to ${queue}: nullValue writes a null value, but a ${body.length}-byte body was given`);
    }
    const value = options.nullValue === true ? null : body;
    await this.connection.write({ topic: queue, value, key: options.key ?? null, headers: { ...headers } });
  }

  /**
   * Consumes `queue` (a topic) in the consumer group `groupId` until the signal
   * aborts or a drain limit is reached; with tiers, the re-inject consumer of
   * `queue` runs beside it (not on a DLQ topic, which never uses tiers). At most `concurrency` records are in flight; which
   * records of one partition may run together is the `ordering` option, and
   * offsets are committed in order, never past an unsettled record. A record
   * that is left unsettled (a failing handler without tiers, a failed write)
   * pauses its partition for `redeliveryDelayMs` and is delivered again.
   */
  async consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
    this.assertOpen();
    if (options.signal.aborted) return;
    // A topic that is itself a DLQ (a drain, a redrive) grows no DLQ and no retry tiers of
    // its own: no tier topics, no re-inject consumer, and a retry of one of its records
    // raises like a retry without tiers (the record stays uncommitted).
    const deadLetterTopic = queue.endsWith(DLQ_SUFFIX);
    const retryTiersMs = deadLetterTopic ? [] : this.retryTiersMs;
    const tiered = retryTiersMs.length > 0;
    if (this.options.createTopics !== false) {
      // Before subscribing (a first start on a topic nobody created), and before the
      // first retry could auto-create a tier topic with the broker's defaults (CreateTime).
      await retryStart(async () => ensureKafkaTopics(await this.connection.admin(), {
        topic: queue,
        retryTiersMs,
        ...(deadLetterTopic ? {} : { deadLetterTopic: dlqName(queue) }),
      }), options.signal, this.logger, 'topics');
    }
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal.addEventListener('abort', onAbort, { once: true });
    this.running.add(stop);

    const drain = new DrainWatch(options, () => stop.abort());
    let member = false;
    const membership = (now: boolean) => {
      if (member !== now) this.members += now ? 1 : -1;
      member = now;
    };
    const context = { write: (r: RecordWrite) => this.connection.write(r), retryTiersMs, logger: this.logger };
    const handle = async (record: KafkaMessage, topic: string, partition: number): Promise<RecordResult> => {
      const delivery = new KafkaDelivery(topic, record, context);
      drain.started();
      try {
        await onDelivery(delivery);
      } catch (error) {
        this.logger.error({ topic, partition, offset: record.offset, error: describe(error) }, 'delivery handler threw; the record stays uncommitted');
      } finally {
        drain.finished();
      }
      if (delivery.state === 'settled') return SETTLED;
      this.logger.warn(
        { topic, partition, offset: record.offset, why: delivery.unsettledWhy ?? 'not settled', redeliveryInMs: this.redeliveryDelayMs },
        'Kafka record not committed; its partition pauses and the record is delivered again',
      );
      return { kind: 'hold', resumeInMs: this.redeliveryDelayMs };
    };

    const loops: Promise<void>[] = [
      runConsumerLoop({
        ...this.tuning,
        kafka: this.connection.kafka,
        groupId: this.groupId,
        topics: [queue],
        concurrency: options.concurrency,
        ordering: this.ordering,
        signal: stop.signal,
        logger: this.logger,
        handle,
        mayTake: () => drain.mayTake(),
        onJoin: () => {
          drain.joined();
          membership(true);
        },
        onLeave: () => membership(false),
      }),
    ];
    if (tiered && this.options.reinject !== false) {
      const reinjector = new KafkaReinjector(
        {
          ...this.tuning,
          topic: queue,
          retryTiersMs,
          groupId: this.options.reinjectGroupId ?? DEFAULT_REINJECT_GROUP_ID,
          createTopics: false,
          redeliveryDelayMs: this.redeliveryDelayMs,
        },
        this.connection,
      );
      loops.push(reinjector.run({ signal: stop.signal }));
    }
    const all = Promise.all(loops.map((loop) => loop.catch((error: unknown) => {
      stop.abort();
      throw error;
    })));
    this.loops.add(all);
    try {
      await all;
    } finally {
      membership(false);
      drain.close();
      this.loops.delete(all);
      this.running.delete(stop);
      options.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Reads the records of `queue` (a topic) that wait for this transport's
   * consumer group (`groupId`): partition by partition, from the group's
   * committed offset (or the log start) to the high watermark when the scan
   * began, skipping the first `offset`. A consumer of its own reads them: a
   * fresh group that seeks, never commits, and is deleted when the scan ends,
   * so nothing the work group sees changes. `location` names the partition and
   * offset; headers are the record's headers as strings. An absent topic reads
   * as empty.
   */
  async *scan(queue: string, options: ScanOptions = {}): AsyncGenerator<ScannedRecord> {
    yield* scanTopic(this.connection.kafka, await this.connection.admin(), queue, this.groupId, options);
  }

  /**
   * How many records of `queue` wait for `groupId`: per partition, the high
   * watermark minus the committed offset (or the log start). Offsets count
   * transaction markers too, so on a transactional topic this is an upper bound.
   */
  /** The cluster's topics (`listTopics`), without Kafka's internal ones (`__consumer_offsets`, …). */
  async listQueues(): Promise<string[]> {
    const topics = await (await this.connection.admin()).listTopics();
    return topics.filter((topic) => !topic.startsWith('__'));
  }

  async depth(queue: string): Promise<number> {
    const ranges = await waitingRanges(await this.connection.admin(), queue, this.groupId);
    return ranges.reduce((sum, r) => sum + r.end - r.start, 0);
  }

  /**
   * Deletes the records of `queue` up to each partition's high watermark
   * (`DeleteRecords`: the log start moves, for every consumer group) and
   * resolves with how many waited for `groupId`. Records produced meanwhile
   * stay. An absent topic purges 0; a compacted topic refuses (the broker's
   * error is passed on).
   */
  async purge(queue: string): Promise<number> {
    const admin = await this.connection.admin();
    const ranges = await waitingRanges(admin, queue, this.groupId);
    const full = ranges.filter((r) => r.end > 0);
    if (full.length > 0) {
      await admin.deleteTopicRecords({ topic: queue, partitions: full.map((r) => ({ partition: r.partition, offset: String(r.end) })) });
    }
    return ranges.reduce((sum, r) => sum + r.end - r.start, 0);
  }

  /** Creates the work topic, its retry tiers and (when named) its DLQ if they do not exist. */
  async ensureTopics(queue: string, options: { partitions?: number; replicationFactor?: number; deadLetterTopic?: string } = {}): Promise<string[]> {
    return ensureKafkaTopics(await this.connection.admin(), { topic: queue, retryTiersMs: this.retryTiersMs, ...options });
  }

  /**
   * A consume loop's consumer is in its group now: it joined and has not
   * crashed or disconnected since (kafkajs reconnects to the brokers by itself
   * and rejoins after a crash it restarts from). False while nothing consumes
   * and after `close()`; a lost broker shows once kafkajs gives up retrying the
   * fetch and crashes the consumer.
   */
  get connected(): boolean {
    return !this.closed && this.members > 0;
  }

  /**
   * Stops every consume loop (in-flight records settle and commit first) and
   * disconnects. Terminal: a second call is a no-op, and publishing or
   * consuming afterwards rejects with `TransportClosedError` (the producer is
   * never connected again).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.running) stop.abort();
    await Promise.allSettled([...this.loops]);
    await this.connection.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new TransportClosedError('Kafka');
  }
}
