import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ScannedRecord } from '@babelqueue/core';
import { kafka, Lab, uniqueQueue } from './support/kafka-lab.js';

async function all(iterable: AsyncIterable<ScannedRecord>): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of iterable) out.push(record);
  return out;
}

describe('Kafka scan, depth and purge (the DLQ console)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(async () => {
    await lab.close();
  });

  it('reads what waits for the group, partition by partition from its committed offset, and commits nothing', async () => {
    const topic = await lab.topic('scan', 2);
    const groupId = uniqueQueue('g');
    await lab.produce(topic, [0, 1, 2].map((n) => ({ value: `p0-${n}`, partition: 0, key: Buffer.from([n, 0xff]), headers: { traceparent: `tp${n}` } })));
    await lab.produce(topic, [0, 1].map((n) => ({ value: `p1-${n}`, partition: 1, key: null })));
    const admin = await lab.admin();
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] });
    const transport = lab.transport({ groupId });
    try {
      assert.equal(await transport.depth(topic), 2 + 2);
      const records = await all(transport.scan(topic));
      assert.deepEqual(records.map((r) => [r.index, String(r.body), r.location]), [
        [0, 'p0-1', 'partition 0, offset 1'],
        [1, 'p0-2', 'partition 0, offset 2'],
        [2, 'p1-0', 'partition 1, offset 0'],
        [3, 'p1-1', 'partition 1, offset 1'],
      ]);
      assert.deepEqual(records[0]!.key, Buffer.from([1, 0xff]), 'the key byte for byte');
      assert.equal(records[0]!.headers.traceparent, 'tp1');
      assert.equal(records[2]!.key, null);
      const skipped = await all(transport.scan(topic, { offset: 3 }));
      assert.deepEqual(skipped.map((r) => [r.index, String(r.body)]), [[3, 'p1-1']]);
      assert.deepEqual(await lab.committed(groupId, topic), { 0: 1, 1: -1 }, 'the work group did not move');
      assert.deepEqual(await all(transport.scan(uniqueQueue('absent'))), []);
      assert.equal(await transport.depth(uniqueQueue('absent')), 0);
    } finally {
      await transport.close();
    }
  });

  it('breaking out early ends the scan; purge deletes up to the high watermark and reports what waited', async () => {
    const topic = await lab.topic('purge', 1);
    await lab.produce(topic, Array.from({ length: 5 }, (_, n) => ({ value: `r${n}` })));
    const transport = lab.transport();
    try {
      for await (const record of transport.scan(topic)) {
        if (record.index === 1) break;
      }
      assert.equal(await transport.purge(topic), 5);
      assert.equal(await transport.depth(topic), 0);
      assert.deepEqual(await all(transport.scan(topic)), []);
      await lab.produce(topic, [{ value: 'after' }]);
      assert.deepEqual((await all(transport.scan(topic))).map((r) => String(r.body)), ['after']);
      assert.equal(await transport.purge(uniqueQueue('absent')), 0);
    } finally {
      await transport.close();
    }
  });
});
