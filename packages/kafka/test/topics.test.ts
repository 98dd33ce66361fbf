import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Admin } from 'kafkajs';
import { ensureKafkaTopics, retryTopicConfig } from '../src/index.js';
import { Lab, kafka, uniqueQueue } from './support/kafka-lab.js';

describe('retry topic config', () => {
  it('uses LogAppendTime and a retention longer than the largest tier', () => {
    const config = Object.fromEntries(retryTopicConfig([500, 1000]).map((c) => [c.name, c.value]));
    assert.equal(config['message.timestamp.type'], 'LogAppendTime');
    assert.ok(Number(config['retention.ms']) > 1000, "Number(config['retention.ms']) > 1000");
    const huge = Object.fromEntries(retryTopicConfig([30 * 24 * 3600_000]).map((c) => [c.name, c.value]));
    assert.ok(Number(huge['retention.ms']) > 30 * 24 * 3600_000, "Number(huge['retention.ms']) > 30 * 24 * 3600_000");
  });
});

describe('ensureKafkaTopics', () => {
  /**
   * A fake admin that behaves like kafkajs against a broker whose metadata lags
   * a topic creation (a busy host): `waitForLeaders` bails on "This server does
   * not host this topic-partition", and the first metadata reads fail the same way;
   * then the first ListOffsets meet leaders that do not serve their partition yet.
   */
  function laggingAdmin(failReads: number, notLeaderAnswers = 0) {
    const created: string[][] = [];
    let reads = 0;
    const offsets: string[] = [];
    const unknown = Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
    const notLeader = Object.assign(new Error('This server is not the leader for that topic-partition'), { type: 'NOT_LEADER_FOR_PARTITION' });
    const admin = {
      listTopics: async () => ['orders'],
      describeCluster: async () => ({ brokers: [{}] }),
      fetchTopicMetadata: async ({ topics }: { topics: string[] }) => {
        if (topics.includes('orders')) return { topics: [{ name: 'orders', partitions: [{ partitionId: 0, leader: 1 }, { partitionId: 1, leader: 1 }] }] };
        reads += 1;
        if (reads <= failReads) throw unknown;
        return { topics: topics.map((name) => ({ name, partitions: [{ partitionId: 0, leader: reads === failReads + 1 ? -1 : 1 }] })) };
      },
      createTopics: async ({ topics, waitForLeaders }: { topics: { topic: string }[]; waitForLeaders?: boolean }) => {
        created.push(topics.map((t) => t.topic));
        if (waitForLeaders) throw unknown;
        return true;
      },
      fetchTopicOffsets: async (topic: string) => {
        offsets.push(topic);
        if (offsets.length <= notLeaderAnswers) throw notLeader;
        return [{ partition: 0, offset: '0', high: '0', low: '0' }];
      },
    };
    return { admin: admin as unknown as Admin, created, reads: () => reads, offsets };
  }

  it('creates what is missing and waits for its leaders itself, through metadata that lags the creation', async () => {
    const { admin, created, reads } = laggingAdmin(3);
    const names = await ensureKafkaTopics(admin, { topic: 'orders', deadLetterTopic: 'orders.dlq', retryTiersMs: [500] });
    assert.deepEqual(names, ['orders.dlq', 'orders.retry.1']);
    assert.deepEqual(created, [['orders.dlq', 'orders.retry.1']]);
    assert.equal(reads(), 5, 'three unknown-topic answers, one without a leader yet, then ready');
  });

  it('returns only once every created topic\'s leader answers ListOffsets, through "not the leader" answers', async () => {
    const { admin, reads, offsets } = laggingAdmin(0, 2);
    const names = await ensureKafkaTopics(admin, { topic: 'orders', deadLetterTopic: 'orders.dlq' });
    assert.deepEqual(names, ['orders.dlq']);
    assert.equal(reads(), 4, 'one read without a leader, then one after each "not the leader" answer, then served');
    assert.deepEqual(offsets, ['orders.dlq', 'orders.dlq', 'orders.dlq'], 'ListOffsets asked until the leader answered');
  });
});

describe('ensureKafkaTopics (real broker)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());

  // A produce right after the topics exist must not meet "not the leader": kafkajs would send
  // the whole batch again and write the records of the partitions that took it twice.
  it('returns only when every partition of every topic it created is served by its leader', async () => {
    const admin = await lab.admin();
    const topic = uniqueQueue('served');
    const names = await ensureKafkaTopics(admin, { topic, partitions: 8, replicationFactor: 1, retryTiersMs: [500, 5_000], deadLetterTopic: `${topic}.dlq` });
    assert.equal(names.length, 4, 'work, DLQ and two tier topics created');
    for (const name of names) {
      const ends = await admin.fetchTopicOffsets(name);
      assert.equal(ends.length, 8, `${name}: every partition answers ListOffsets at once`);
    }
  });
});
