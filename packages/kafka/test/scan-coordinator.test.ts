// A broker that just started loads its consumer groups: OffsetFetch answers
// NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS for a while, and kafkajs's
// admin gives up after its own few retries (a `dlq list` on a fresh Kafka
// failed so). The admin here is a fake: a real broker does not load on demand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Admin } from 'kafkajs';
import { waitingRanges } from '../src/scan.js';

function admin(failures: string[]): Admin & { calls: number } {
  const fake = {
    calls: 0,
    listTopics: async () => ['t'],
    fetchTopicOffsets: async () => [{ partition: 0, offset: '5', high: '5', low: '0' }],
    fetchOffsets: async () => {
      fake.calls += 1;
      const type = failures.shift();
      if (type !== undefined) throw Object.assign(new Error(type), { type, retriable: true });
      return [{ topic: 't', partitions: [{ partition: 0, offset: '2' }] }];
    },
  };
  return fake as unknown as Admin & { calls: number };
}

describe('Kafka scan: a group coordinator that is loading or moving', () => {
  it('reads the committed offsets again until the coordinator answers', async () => {
    const fake = admin(['COORDINATOR_LOAD_IN_PROGRESS', 'NOT_COORDINATOR']);
    assert.deepEqual(await waitingRanges(fake, 't', 'g'), [{ partition: 0, start: 2, end: 5 }]);
    assert.equal(fake.calls, 3);
  });

  it('any other error fails the read at once', async () => {
    const fake = admin(['GROUP_AUTHORIZATION_FAILED']);
    await assert.rejects(waitingRanges(fake, 't', 'g'), /GROUP_AUTHORIZATION_FAILED/);
    assert.equal(fake.calls, 1);
  });
});
