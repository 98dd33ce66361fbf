import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp, silentLogger } from '@babelqueue/core';
import { Lab, kafka, uniqueQueue, until } from './support/kafka-lab.js';

const URN = 'urn:babel:orders:created';
const b = (s: string) => Buffer.from(s, 'utf8');

function envelope(id: string): Buffer {
  return b(JSON.stringify({ job: URN, trace_id: `t-${id}`, data: {}, meta: { id, queue: 'q', lang: 'java', schema_version: 1, created_at: 1 }, attempts: 0 }));
}

describe('Kafka at-least-once (real broker)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('a consumer killed with SIGKILL before its commit: the record is delivered again to the group', async () => {
    const topic = await lab.topic('crash');
    const groupId = uniqueQueue('crash-group');
    await lab.produce(topic, [{ value: envelope('survivor') }]);

    const child = spawn(process.execPath, [
      '--conditions=source', '--import', 'tsx',
      join(import.meta.dirname, 'support', 'crash-consumer.ts'), lab.url, topic, groupId,
    ], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    let exitCode: number | null | undefined;
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve((exitCode = code))));
    try {
      // A busy machine may take a while to start the child and join its group; an early exit ends the wait.
      await until(() => out.includes('handling survivor') || exitCode !== undefined, 90_000, 'the child to start handling');
      assert.equal(exitCode, undefined, `the child exited early (${exitCode}) before handling`);
    } finally {
      child.kill('SIGKILL');
    }
    await exited;
    assert.deepEqual(await lab.committed(groupId, topic), { 0: -1 }, 'nothing was committed');

    const seen: string[] = [];
    const app = createApp({ transport: lab.transport({ groupId }), queue: topic, logger: silentLogger })
      .handle(URN, (_d, msg) => void seen.push(`${msg.id}@${msg.attempts}`));
    // The dead member holds the partition until its 6 s session times out.
    assert.equal(await app.consume({ maxMessages: 1, idleMs: 30_000 }), 1);
    await app.close();
    assert.deepEqual(seen, ['survivor@1']);
    assert.deepEqual(await lab.committed(groupId, topic), { 0: 1 });
  });

  it('a rebalance while records are in flight loses nothing and commits every partition to its end', async () => {
    const topic = await lab.topic('rebalance', 2);
    const groupId = uniqueQueue('rebalance-group');
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
    await lab.produce(topic, ids.map((id, i) => ({ value: envelope(id), partition: i % 2 })));
    const seen = new Set<string>();
    const handler = async (_d: unknown, msg: { id: string }) => {
      await new Promise((r) => setTimeout(r, 25));
      seen.add(msg.id);
    };
    const first = createApp({ transport: lab.transport({ groupId }), queue: topic, logger: silentLogger }).handle(URN, handler);
    const second = createApp({ transport: lab.transport({ groupId }), queue: topic, logger: silentLogger }).handle(URN, handler);
    const stop = new AbortController();
    const runs = [first.run({ signal: stop.signal, concurrency: 2 })];
    try {
      await until(() => seen.size >= 5, 30_000, 'the first consumer to get going');
      runs.push(second.run({ signal: stop.signal, concurrency: 2 })); // joins mid-stream: the group rebalances
      await until(() => seen.size === ids.length, 60_000, 'every record');
      // The end is read from the broker: a produce retried by the client may have written a
      // record twice (kafkajs' producer is not idempotent), and its copy is consumed too.
      const ends = await lab.ends(topic);
      assert.ok(ends[0]! >= 20 && ends[1]! >= 20, `every record produced (ends ${JSON.stringify(ends)})`);
      await until(async () => {
        const committed = await lab.committed(groupId, topic);
        return committed[0] === ends[0] && committed[1] === ends[1];
      }, 30_000, 'both partitions committed to their end');
    } finally {
      stop.abort();
      await Promise.allSettled(runs);
    }
    // Never past the end either: a commit beyond it would skip the next record written there.
    assert.deepEqual(await lab.committed(groupId, topic), await lab.ends(topic));
  });
});
