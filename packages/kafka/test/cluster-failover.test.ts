import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp } from '@babelqueue/core';
import { captureLogger } from '../../../test/support/capture-logger.js';
import { cluster, clusterNode } from '../../../test/support/clusters.js';
import { ensureKafkaTopics } from '../src/index.js';
import { Lab, runUntil, uniqueQueue } from './support/kafka-lab.js';

const suite = cluster('kafka-ha');
const URN = 'urn:babel:orders:created';
const N = 300;
/** Publishes before the leader is killed: the rest go out while it is dead. */
const KILL_AT = 100;

describe('Kafka on a three-node cluster (kafka-ha: RF 3, min.insync.replicas=2)', { skip: suite.skip }, () => {
  let lab: Lab;
  before(async () => {
    lab = new Lab(suite.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('the URL names all three bootstrap brokers, and topics the binding creates get replication factor 3', async () => {
    const topic = uniqueQueue('ha-rf');
    await ensureKafkaTopics(await lab.admin(), { topic });
    const { topics } = await (await lab.admin()).fetchTopicMetadata({ topics: [topic] });
    assert.equal(topics[0]!.partitions[0]!.replicas.length, 3);
  });

  it('the partition leader SIGKILLed mid-stream: every acknowledged publish is consumed, and publishing goes on', async () => {
    const topic = uniqueQueue('ha-leader');
    const admin = await lab.admin();
    await ensureKafkaTopics(admin, { topic });
    const leader = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions[0]!.leader;
    assert.ok(leader >= 1 && leader <= 3, `leader ${leader} is a lab node`);

    const logger = captureLogger();
    const transport = lab.transport({ logger });
    const consumed = new Set<number>();
    const app = createApp({ transport, queue: topic, logger })
      .handle(URN, (data) => void consumed.add((data as { n: number }).n));
    const acked: number[] = [];
    const failed: string[] = [];
    let killed: Promise<void> | undefined;
    let publishing = true;
    const everything = runUntil(app, () => acked.length > 0 && killed !== undefined && publishing === false && acked.every((n) => consumed.has(n)),
      'every acknowledged publish consumed', 180_000);
    try {
      for (let n = 0; n < N; n += 1) {
        if (n === KILL_AT) killed = clusterNode('kill-node', 'kafka-ha', String(leader)).then(() => undefined);
        try {
          await app.publish(URN, { n });
          acked.push(n);
        } catch (error) {
          failed.push(`${n}: ${(error as Error).message}`);
        }
      }
      publishing = false;
      await everything;
    } finally {
      publishing = false;
      await killed;
      await clusterNode('restore-node', 'kafka-ha', String(leader));
    }
    const lost = acked.filter((n) => !consumed.has(n));
    assert.deepEqual(lost, [], 'nothing acknowledged is lost');
    // The stream flows again: the publishes after the failover all went through.
    assert.ok(acked.includes(N - 1) && acked.includes(N - 2), `the last publishes were acknowledged (failed: ${failed.join('; ')})`);
    // At-least-once: a send retried after the leader died may be on the topic twice.
    const records = await lab.read(topic, await lab.size(topic), 60_000);
    const seen = new Map<number, number>();
    for (const record of records) {
      const n = (JSON.parse(record.value!.toString()) as { data: { n: number } }).data.n;
      seen.set(n, (seen.get(n) ?? 0) + 1);
    }
    const twice = [...seen].filter(([, times]) => times > 1).length;
    process.stdout.write(`# kafka-ha: leader ${leader} killed at publish ${KILL_AT}; ${acked.length}/${N} acknowledged, ${failed.length} failed (${failed.join('; ')}), `
      + `${consumed.size} consumed, ${twice} written twice; ${logger.lines.filter((l) => l.level === 'warn' || l.level === 'error').length} warn/error log lines\n`);
  });
});
