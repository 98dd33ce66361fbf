import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssignerProtocol } from 'kafkajs';
import { RangeAssigner, rangeAssignment } from '../src/range-assigner.js';

const partitions = (counts: Record<string, number>) => (topic: string) => Array.from({ length: counts[topic] ?? 0 }, (_, i) => i);

describe('range assignment', () => {
  it('gives each member a consecutive run, the first ones one extra (Kafka RangeAssignor)', () => {
    const plan = rangeAssignment([{ memberId: 'b', topics: ['t'] }, { memberId: 'a', topics: ['t'] }], partitions({ t: 5 }));
    assert.deepEqual(Object.fromEntries(plan), { b: { t: [3, 4] }, a: { t: [0, 1, 2] } });
  });

  it('only assigns a topic to the members subscribed to it', () => {
    const plan = rangeAssignment(
      [{ memberId: 'm1', topics: ['work'] }, { memberId: 'm2', topics: ['work', 'work.retry.1'] }],
      partitions({ work: 2, 'work.retry.1': 2 }),
    );
    assert.deepEqual(Object.fromEntries(plan), { m1: { work: [0] }, m2: { work: [1], 'work.retry.1': [0, 1] } });
  });

  it('leaves extra members without partitions', () => {
    const plan = rangeAssignment(['a', 'b', 'c'].map((memberId) => ({ memberId, topics: ['t'] })), partitions({ t: 2 }));
    assert.deepEqual(Object.fromEntries(plan), { a: { t: [0] }, b: { t: [1] }, c: {} });
  });

  it('speaks the standard consumer protocol under the name "range"', async () => {
    const targets: string[][] = [];
    const cluster = {
      addMultipleTargetTopics: async (topics: string[]) => void targets.push(topics),
      findTopicPartitionMetadata: (topic: string) => partitions({ x: 3, y: 1 })(topic).map((partitionId) => ({ partitionId })),
    };
    const assigner = RangeAssigner({ cluster: cluster as never, groupId: 'g', logger: undefined as never });
    assert.equal(assigner.name, 'range');
    const meta = (topics: string[]) => AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) });
    assert.deepEqual(AssignerProtocol.MemberMetadata.decode(assigner.protocol({ topics: ['x'] }).metadata)?.topics, ['x']);
    const result = await assigner.assign({ members: [{ memberId: 'm1', memberMetadata: meta(['x']) }, { memberId: 'm2', memberMetadata: meta(['x', 'y']) }], topics: ['x'] });
    const decoded = Object.fromEntries(result.map((r) => [r.memberId, AssignerProtocol.MemberAssignment.decode(r.memberAssignment)?.assignment]));
    assert.deepEqual(decoded, { m1: { x: [0, 1] }, m2: { x: [2], y: [0] } });
    assert.deepEqual(targets, [['x', 'y']], 'the leader loads metadata for every subscribed topic');
  });
});
