import { Kafka, Partitioners, logLevel, type IHeaders, type KafkaMessage, type Producer } from 'kafkajs';
import { silentLogger } from '@babelqueue/core';
import { projectKafka } from '@babelqueue/core/binding';
import { ensureKafkaTopics, KafkaHeader, KafkaTransport } from '@babelqueue/kafka';
import { broker, uniqueQueue } from '../../support/brokers.js';
import { until } from '../../support/until.js';
import { bodySays } from '../expected.js';
import type { AgreementLab, AgreementRow, CopyKind, NativeRecord, ProduceOptions } from '../row.js';

const suite = broker('kafka');
const TIER_MS = 200;
const CONTRACT: readonly string[] = Object.values(KafkaHeader);

function text(value: IHeaders[string]): string | undefined {
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return last === undefined || last === null ? undefined : last.toString();
}

function nativeOf(message: KafkaMessage): NativeRecord {
  const contract: Record<string, unknown> = {};
  const riders: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.headers ?? {})) {
    const t = text(value);
    if (t === undefined) continue;
    if (CONTRACT.includes(key)) contract[key] = t;
    else riders[key] = t;
  }
  return { body: message.value, contract, riders };
}

class KafkaLab implements AgreementLab {
  private readonly client: Kafka;
  private producerP: Promise<Producer> | undefined;

  constructor(private readonly url: string) {
    const brokers = url.replace(/^kafka:\/\//, '').split(/[/?]/)[0]!.split(',');
    this.client = new Kafka({ brokers, clientId: 'babelqueue-agreement', logLevel: logLevel.NOTHING });
  }

  async queue(prefix: string): Promise<string> {
    const topic = uniqueQueue(`bq-agree-${prefix}`);
    const admin = this.client.admin();
    await admin.connect();
    try {
      // The binding's helper waits for the leaders itself (kafkajs' waitForLeaders gives up while metadata lags).
      await ensureKafkaTopics(admin, { topic, deadLetterTopic: `${topic}.dlq`, partitions: 1, replicationFactor: 1 });
    } finally {
      await admin.disconnect();
    }
    return topic;
  }

  transport(): KafkaTransport {
    // Both consumes of one test use the same groups, so the second resumes after the first's commit.
    return new KafkaTransport({
      url: this.url,
      groupId: uniqueQueue('agree-g'),
      reinjectGroupId: uniqueQueue('agree-ri'),
      retryTiersMs: [TIER_MS],
      logger: silentLogger,
      sessionTimeoutMs: 6000,
      redeliveryDelayMs: 200,
      commitIntervalMs: 100,
    });
  }

  async produce(topic: string, body: Buffer, options: ProduceOptions = {}): Promise<void> {
    const { headers, timestamp } = projectKafka(bodySays(options.claims ?? body), options.riders);
    if (options.schemaVersion !== undefined) headers[KafkaHeader.SCHEMA_VERSION] = options.schemaVersion;
    this.producerP ??= (async () => {
      const producer = this.client.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      return producer;
    })();
    await (await this.producerP).send({ topic, acks: -1, messages: [{ value: body, headers, ...(timestamp ? { timestamp } : {}) }] });
  }

  readRetry(topic: string): Promise<NativeRecord> {
    // The tier topic is a log: reading it in a group of its own leaves the copy for the re-inject consumer.
    return this.first(`${topic}.retry.1`);
  }

  readDeadLetter(dlq: string): Promise<NativeRecord> {
    return this.first(dlq);
  }

  project(body: Buffer, kind: CopyKind, topic: string): Record<string, unknown> {
    const { headers } = projectKafka(bodySays(body));
    return kind === 'retry'
      ? { ...headers, [KafkaHeader.DELAY]: String(TIER_MS), [KafkaHeader.ORIGINAL_TOPIC]: topic }
      : headers;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.producerP?.then((p) => p.disconnect())]);
  }

  /** The first record of `topic`, read from the beginning in a fresh group. */
  private async first(topic: string): Promise<NativeRecord> {
    const consumer = this.client.consumer({ groupId: uniqueQueue('agree-reader'), maxWaitTimeInMs: 100 });
    await consumer.connect();
    try {
      await until(() => consumer.subscribe({ topic, fromBeginning: true }).then(() => true, () => false), 20_000, `metadata of ${topic}`);
      let got: KafkaMessage | undefined;
      await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => void (got ??= message) });
      await until(() => got !== undefined, 30_000, `a record on ${topic}`);
      return nativeOf(got!);
    } finally {
      await consumer.disconnect();
    }
  }
}

export const row: AgreementRow = {
  binding: 'kafka',
  skip: suite.skip,
  fields: { attempts: KafkaHeader.ATTEMPTS, schemaVersion: KafkaHeader.SCHEMA_VERSION },
  versionGate: true,
  poisonRetry: true,
  ridersOnDeadLetter: true,
  open: async () => new KafkaLab(suite.url!),
};
