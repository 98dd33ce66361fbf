import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Admin } from 'kafkajs';
import { ensureKafkaTopics, retryTopicConfig } from '../src/index.js';

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
   * not host this topic-partition", and the first metadata reads fail the same way.
   */
  function laggingAdmin(failReads: number) {
    const created: string[][] = [];
    let reads = 0;
    const unknown = Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
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
    };
    return { admin: admin as unknown as Admin, created, reads: () => reads };
  }

  it('creates what is missing and waits for its leaders itself, through metadata that lags the creation', async () => {
    const { admin, created, reads } = laggingAdmin(3);
    const names = await ensureKafkaTopics(admin, { topic: 'orders', deadLetterTopic: 'orders.dlq', retryTiersMs: [500] });
    assert.deepEqual(names, ['orders.dlq', 'orders.retry.1']);
    assert.deepEqual(created, [['orders.dlq', 'orders.retry.1']]);
    assert.equal(reads(), 5, 'three unknown-topic answers, one without a leader yet, then ready');
  });
});
