import { Kafka, logLevel } from 'kafkajs';
import { KafkaTransport } from '@babelqueue/kafka';
import { killSockets } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

/** Short tiers, so retried records come back within the run. */
const RETRY_TIERS_MS = [250, 1000];
/** Partitions of the work topic: three workers share them. */
const PARTITIONS = 6;

/** The bootstrap servers of `kafka://host:port[,host:port…]` (a cluster row names several). */
export const brokers = (url: string) => url.replace(/^kafka:\/\//, '').split(/[/?]/)[0]!.split(',');
/** Each consumed topic has its own group, so a DLQ reader never joins the workers' group. */
const groupOf = (queue: string) => `${queue}.group`;
const reinjectGroupOf = (queue: string) => `${queue}.reinject`;

/**
 * How long one inspection may take. A kafkajs admin call once never answered (a CI run's chaos
 * loop waited half an hour on a lag read); past this it fails, and the callers read again.
 */
const ADMIN_DEADLINE_MS = 60_000;

export async function admin<T>(target: DriverTarget, work: (admin: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  const client = new Kafka({ brokers: brokers(target.url), clientId: 'reliability-inspector', logLevel: logLevel.NOTHING }).admin();
  let timer: NodeJS.Timeout | undefined;
  const deadline = (ms: number, what: string) => new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the Kafka admin did not ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([client.connect().then(() => work(client)), deadline(ADMIN_DEADLINE_MS, 'answer')]);
  } finally {
    clearTimeout(timer);
    await Promise.race([client.disconnect(), deadline(10_000, 'disconnect')]).catch(() => undefined);
    clearTimeout(timer);
  }
}

/** Records of `topic` past `group`'s committed offsets (the whole topic when it committed nothing). */
async function lag(client: ReturnType<Kafka['admin']>, topic: string, group: string): Promise<number> {
  const topics = await client.listTopics();
  if (!topics.includes(topic)) return 0;
  const ends = await client.fetchTopicOffsets(topic);
  const [committed] = await client.fetchOffsets({ groupId: group, topics: [topic] });
  const at = new Map((committed?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  return ends.reduce((sum, p) => {
    const done = at.get(p.partition) ?? -1;
    return sum + Number(p.high) - (done < 0 ? Number(p.low) : done);
  }, 0);
}

const driver: BrokerDriver = {
  name: 'kafka',
  lab: 'kafka',
  description: `Kafka 4.4 (KRaft), ${PARTITIONS} partitions, retry tiers ${RETRY_TIERS_MS.join('/')} ms, session timeout 6 s`,
  transport: (target) => new KafkaTransport({
    brokers: brokers(target.url),
    groupId: groupOf(target.queue),
    reinjectGroupId: reinjectGroupOf(target.queue),
    ...(target.role === 'reader' ? { ordering: 'none' as const } : { retryTiersMs: RETRY_TIERS_MS }),
    // Workers: the broker's group.min.session.timeout.ms, so a killed worker's partitions move on
    // after this. The DLQ reader is never killed: a longer session keeps it in its group on a
    // loaded machine, where 6 s without a heartbeat had it rejoin again and again and read nothing.
    sessionTimeoutMs: target.role === 'reader' ? 30_000 : 6_000,
    logger: target.logger,
  }),
  queue: (base) => base,
  async prepare(target, queue, dlq) {
    const transport = new KafkaTransport({ brokers: brokers(target.url), retryTiersMs: RETRY_TIERS_MS, logger: target.logger });
    try {
      await transport.ensureTopics(queue, { partitions: PARTITIONS, deadLetterTopic: dlq });
    } finally {
      await transport.close();
    }
  },
  leftover: (target, queue) => admin(target, async (client) => {
    const counts: Record<string, number> = { uncommitted: await lag(client, queue, groupOf(queue)) };
    for (let n = 1; n <= RETRY_TIERS_MS.length; n++) counts[`retry.${n}`] = await lag(client, `${queue}.retry.${n}`, reinjectGroupOf(queue));
    return counts;
  }),
  ports: (url) => brokers(url).map((host) => Number(host.split(':').pop())),
  async cut(target) {
    let cut = 0;
    for (const port of driver.ports(target.url)) cut += await killSockets(port);
    return `ss -K: ${cut} connection(s) to ${brokers(target.url).join(', ')}`;
  },
  cleanup: (target, queues) => admin(target, async (client) => {
    const existing = new Set(await client.listTopics());
    const topics = queues.flatMap((q) => [q, ...RETRY_TIERS_MS.map((_, i) => `${q}.retry.${i + 1}`)]).filter((t) => existing.has(t));
    if (topics.length > 0) await client.deleteTopics({ topics });
    await client.deleteGroups(queues.flatMap((q) => [groupOf(q), reinjectGroupOf(q)])).catch(() => undefined);
  }),
  // Every kill costs a rebalance of the whole group (the dead member is noticed
  // when its 6 s session runs out), so kills come every few seconds, not ms.
  chaos: { workers: 3, concurrency: 4, killEveryMs: [6_000, 12_000], redeliveryMs: 20_000 },
  // The broker's message.max.bytes is about 1 MiB.
  maxBodyBytes: 900_000,
};

export default driver;
