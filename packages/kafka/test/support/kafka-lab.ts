import { silentLogger, type App, type RunOptions } from '@babelqueue/core';
import { Kafka, Partitioners, logLevel, type Admin, type IHeaders, type ITopicConfig, type KafkaMessage, type Producer } from 'kafkajs';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';
import { until } from '../../../../test/support/until.js';
import { ensureKafkaTopics, KafkaTransport, type KafkaTransportOptions } from '../../src/index.js';

export { uniqueQueue };

/** The Kafka suite: `kafka.url` is kafka://host:port, `kafka.skip` goes to `describe`. */
export const kafka = broker('kafka');

/** A consumed record with where it came from. */
export type RawRecord = KafkaMessage & { topic: string; partition: number };

/** The test-side view of the cluster: plain kafkajs, as another SDK would read and write it. */
export class Lab {
  readonly client: Kafka;
  private producerP: Promise<Producer> | undefined;
  private adminP: Promise<Admin> | undefined;
  private readonly opened = new Set<KafkaTransport>();

  constructor(readonly url: string) {
    const brokers = url.replace(/^kafka:\/\//, '').split(/[/?]/)[0]!.split(',');
    this.client = new Kafka({ brokers, clientId: 'babelqueue-test', logLevel: logLevel.NOTHING });
  }

  /** A transport on this cluster with test-friendly tuning and a unique group; {@link closeTransports} closes it. */
  transport(options: Partial<KafkaTransportOptions> = {}): KafkaTransport {
    const transport = new KafkaTransport({
      url: this.url,
      groupId: uniqueQueue('g'),
      // Parallel suites would otherwise rebalance each other in the shared default re-inject group.
      reinjectGroupId: uniqueQueue('ri'),
      logger: silentLogger,
      sessionTimeoutMs: 6000,
      redeliveryDelayMs: 200,
      commitIntervalMs: 100,
      ...options,
    });
    this.opened.add(transport);
    return transport;
  }

  /**
   * Closes every transport {@link transport} made (close is idempotent). Run it in
   * `afterEach`: a failed assertion then never leaves a client open that would
   * keep the file alive until the runner's timeout.
   */
  async closeTransports(): Promise<void> {
    const all = [...this.opened];
    this.opened.clear();
    await Promise.allSettled(all.map((t) => t.close()));
  }

  admin(): Promise<Admin> {
    this.adminP ??= (async () => {
      const admin = this.client.admin();
      await admin.connect();
      return admin;
    })();
    return this.adminP;
  }

  /** Creates a topic with `partitions` partitions and waits for its leaders (the binding's own helper). */
  async topic(prefix: string, partitions = 1): Promise<string> {
    const name = uniqueQueue(prefix);
    await ensureKafkaTopics(await this.admin(), { topic: name, partitions, replicationFactor: 1 });
    return name;
  }

  /**
   * Creates topics exactly as configured and waits until the broker's metadata
   * shows them with leaders (kafkajs' waitForLeaders gives up while it lags).
   */
  async createTopics(topics: ITopicConfig[]): Promise<void> {
    const admin = await this.admin();
    await admin.createTopics({ topics: topics.map((t) => ({ replicationFactor: 1, numPartitions: 1, ...t })), waitForLeaders: false });
    const names = topics.map((t) => t.topic);
    await until(() => admin.fetchTopicMetadata({ topics: names }).then(
      (m) => m.topics.every((t) => t.partitions.every((p) => p.leader >= 0)),
      () => false,
    ), 30_000, `leaders of ${names.join(', ')}`);
  }

  /** Writes raw records (value, key, headers exactly as given). */
  async produce(topic: string, messages: { value: Buffer | string | null; key?: Buffer | null; headers?: IHeaders; partition?: number }[]): Promise<void> {
    this.producerP ??= (async () => {
      // Idempotent: kafkajs retries a whole produce request when one partition of it fails (a
      // leader still settling on a fresh topic), which wrote the other partition's records twice.
      const producer = this.client.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      return producer;
    })();
    await (await this.producerP).send({ topic, acks: -1, messages });
  }

  /** Reads `count` records of `topic` from the beginning (a fresh group), or fails after `timeoutMs`. */
  async read(topic: string, count: number, timeoutMs = 20_000): Promise<RawRecord[]> {
    const consumer = this.client.consumer({ groupId: uniqueQueue('reader'), maxWaitTimeInMs: 100 });
    const out: RawRecord[] = [];
    await consumer.connect();
    try {
      // A topic the binding just auto-created may not be in the metadata yet.
      await until(() => consumer.subscribe({ topic, fromBeginning: true }).then(() => true, () => false), 10_000, `metadata of ${topic}`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${topic}: read ${out.length} of ${count} records in ${timeoutMs} ms`)), timeoutMs);
        void consumer.run({
          autoCommit: false,
          eachMessage: async ({ topic: t, partition, message }) => {
            out.push({ ...message, topic: t, partition });
            if (out.length >= count) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    return out;
  }

  /** True when `topic` exists. */
  async exists(topic: string): Promise<boolean> {
    return (await (await this.admin()).listTopics()).includes(topic);
  }

  /** The number of records on `topic` (sum of end offsets; topics here are never compacted). */
  async size(topic: string): Promise<number> {
    const offsets = await (await this.admin()).fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  }

  /** The end (high watermark) of each partition of `topic`: the offset a consumer that read everything commits. */
  async ends(topic: string): Promise<Record<number, number>> {
    const offsets = await (await this.admin()).fetchTopicOffsets(topic);
    return Object.fromEntries(offsets.map((p) => [p.partition, Number(p.high)]));
  }

  /** The committed offsets of `groupId` on `topic`, by partition (-1: none). */
  async committed(groupId: string, topic: string): Promise<Record<number, number>> {
    const [entry] = await (await this.admin()).fetchOffsets({ groupId, topics: [topic] });
    return Object.fromEntries((entry?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.producerP?.then((p) => p.disconnect()), this.adminP?.then((a) => a.disconnect())]);
  }
}

export { until };

/**
 * Runs `app` until `done` holds (or fails after `timeoutMs` naming `what`), then
 * stops it and waits for it, whatever happened. A run that crashes ends the
 * wait with its error.
 */
export async function runUntil(
  app: App,
  done: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
  options: Omit<RunOptions, 'signal'> = {},
): Promise<void> {
  const stop = new AbortController();
  let crashed: { error: unknown } | undefined;
  const run = app.run({ ...options, signal: stop.signal }).catch((error: unknown) => {
    crashed = { error };
  });
  try {
    await until(async () => crashed !== undefined || (await done()), timeoutMs, what);
  } finally {
    stop.abort();
    await run;
  }
  if (crashed) throw crashed.error;
}

/** Header value as text (last of a repeat), for assertions. */
export function text(headers: IHeaders | undefined, name: string): string | null | undefined {
  const value = headers?.[name];
  if (value === undefined) return undefined;
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return last === null || last === undefined ? null : last.toString();
}
