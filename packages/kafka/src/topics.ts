import type { Admin, ITopicConfig } from 'kafkajs';
import { retryTiersOf } from './retry-tiers.js';

/** The least retention (ms) set on retry topics: the broker default of 7 days, or twice the largest tier when that is longer. */
const MIN_RETRY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Topic configs of a retry-tier topic: `message.timestamp.type=LogAppendTime`
 * (the re-inject wait is measured from when the broker received the record)
 * and a retention longer than the largest tier.
 */
export function retryTopicConfig(retryTiersMs: readonly number[]): { name: string; value: string }[] {
  const largest = retryTiersMs.length > 0 ? Math.max(...retryTiersMs) : 0;
  return [
    { name: 'message.timestamp.type', value: 'LogAppendTime' },
    { name: 'retention.ms', value: String(Math.max(MIN_RETRY_RETENTION_MS, 2 * largest)) },
  ];
}

/** What {@link ensureKafkaTopics} creates. */
export interface KafkaTopicsSpec {
  /** The work topic. */
  readonly topic: string;
  /** Retry tiers: creates `<topic>.retry.1..n` with {@link retryTopicConfig}. */
  readonly retryTiersMs?: readonly number[];
  /** Also create the work topic itself. Default true. */
  readonly work?: boolean;
  /** Also create the dead-letter topic (`<topic>.dlq` unless named). Default: not created. */
  readonly deadLetterTopic?: string;
  /** Partitions of topics created here. Default: the work topic's count when it exists, else 1. */
  readonly partitions?: number;
  /** Replication factor. Default: min(3, brokers in the cluster). */
  readonly replicationFactor?: number;
}

/**
 * Creates the topics of one work topic that do not exist yet (existing topics
 * are left as they are). Resolves with the names it created.
 */
export async function ensureKafkaTopics(admin: Admin, spec: KafkaTopicsSpec): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const partitions = spec.partitions ?? (await partitionCount(admin, spec.topic, existing)) ?? 1;
  const replicationFactor = spec.replicationFactor ?? Math.min(3, (await admin.describeCluster()).brokers.length);
  const wanted: ITopicConfig[] = [];
  const add = (topic: string, configEntries?: { name: string; value: string }[]) => {
    if (!existing.has(topic)) wanted.push({ topic, numPartitions: partitions, replicationFactor, ...(configEntries ? { configEntries } : {}) });
  };
  if (spec.work !== false) add(spec.topic);
  if (spec.deadLetterTopic !== undefined) add(spec.deadLetterTopic);
  const tiers = spec.retryTiersMs ?? [];
  for (const tier of retryTiersOf(spec.topic, tiers)) add(tier.topic, retryTopicConfig(tiers));
  if (wanted.length === 0) return [];
  const names = wanted.map((t) => t.topic);
  // kafkajs' own waitForLeaders gives up on "This server does not host this
  // topic-partition", which a broker answers while its metadata still lags the
  // creation (a busy host): wait for the leaders here instead.
  await admin.createTopics({ topics: wanted, waitForLeaders: false });
  await untilLeaders(admin, names);
  return names;
}

/** How long a created topic may take until every partition's leader serves it. */
const LEADERS_TIMEOUT_MS = 30_000;
const LEADERS_POLL_MS = 100;

/**
 * Resolves once every partition of `topics` has a leader in the metadata and
 * that leader answers ListOffsets for it; rethrows the last lag error after the
 * deadline. A leader named in the metadata may not serve its partition yet: a
 * produce then meets "not the leader" on that partition and kafkajs sends the
 * whole batch again, writing the records of the other partitions twice.
 */
async function untilLeaders(admin: Admin, topics: string[]): Promise<void> {
  const deadline = Date.now() + LEADERS_TIMEOUT_MS;
  for (;;) {
    let lag: unknown;
    try {
      const metadata = await admin.fetchTopicMetadata({ topics });
      if (metadata.topics.length === topics.length && metadata.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) {
        for (const topic of topics) await admin.fetchTopicOffsets(topic);
        return;
      }
    } catch (error) {
      if (!isMetadataLag(error)) throw error;
      lag = error;
    }
    if (Date.now() > deadline) throw lag ?? new Error(`Kafka topics ${topics.join(', ')} have no leader after ${LEADERS_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, LEADERS_POLL_MS));
  }
}

/**
 * The errors of a topic the broker does not show or serve (yet): a topic nobody
 * created, or one just created whose leaders are still taking their partitions.
 */
export function isMetadataLag(error: unknown): boolean {
  const type = (error as { type?: unknown } | null)?.type;
  return type === 'UNKNOWN_TOPIC_OR_PARTITION' || type === 'LEADER_NOT_AVAILABLE' || type === 'NOT_LEADER_FOR_PARTITION';
}

async function partitionCount(admin: Admin, topic: string, existing: Set<string>): Promise<number | undefined> {
  if (!existing.has(topic)) return undefined;
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  return topics[0]?.partitions.length;
}
