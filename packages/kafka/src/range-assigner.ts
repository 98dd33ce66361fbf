import { AssignerProtocol, type GroupMember, type GroupMemberAssignment, type PartitionAssigner } from 'kafkajs';

/** One member's subscription, as every Kafka client encodes it in its group metadata. */
export interface Subscription {
  readonly memberId: string;
  readonly topics: readonly string[];
}

/**
 * Kafka's range assignment: for each topic, the members subscribed to it
 * (sorted by member id) get consecutive runs of its partitions, the first
 * `partitions % members` of them one extra. Members only get topics they
 * subscribed to.
 */
export function rangeAssignment(
  subscriptions: readonly Subscription[],
  partitionsOf: (topic: string) => readonly number[],
): Map<string, Record<string, number[]>> {
  const out = new Map<string, Record<string, number[]>>(subscriptions.map((s) => [s.memberId, {}]));
  const topics = [...new Set(subscriptions.flatMap((s) => s.topics))].sort();
  for (const topic of topics) {
    const members = subscriptions.filter((s) => s.topics.includes(topic)).map((s) => s.memberId).sort();
    const partitions = [...partitionsOf(topic)].sort((a, b) => a - b);
    const each = Math.floor(partitions.length / members.length);
    const extra = partitions.length % members.length;
    members.forEach((memberId, i) => {
      const start = i * each + Math.min(i, extra);
      const mine = partitions.slice(start, start + each + (i < extra ? 1 : 0));
      if (mine.length > 0) out.get(memberId)![topic] = mine;
    });
  }
  return out;
}

/**
 * The `range` partition assigner for kafkajs. kafkajs' own assigner is named
 * `RoundRobinAssigner`, which no other client offers, so a group mixing
 * kafkajs with Java or librdkafka-based consumers (the Python, Go, .NET and
 * PHP SDKs) could not agree on a protocol; and it hands the leader's topics
 * to every member whatever each subscribed to. `range` is in every client's
 * default list, and this one honours each member's own subscription.
 */
export const RangeAssigner: PartitionAssigner = ({ cluster }) => ({
  name: 'range',
  version: 0,
  async assign({ members }: { members: GroupMember[]; topics: string[] }): Promise<GroupMemberAssignment[]> {
    const subscriptions = members.map((m) => ({
      memberId: m.memberId,
      topics: AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? [],
    }));
    // Other members may subscribe to topics this leader has no metadata for yet.
    await cluster.addMultipleTargetTopics([...new Set(subscriptions.flatMap((s) => s.topics))]);
    const plan = rangeAssignment(subscriptions, (topic) => cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId));
    return [...plan].map(([memberId, assignment]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment, userData: Buffer.alloc(0) }),
    }));
  },
  protocol({ topics }: { topics: string[] }) {
    return { name: 'range', metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) };
  },
});
