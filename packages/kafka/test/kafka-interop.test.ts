// One consumer group with a Python member and a TypeScript member at the same
// time (the cross-language scenarios, one side after the other, live in
// test/interop/kafka.test.ts). kafkajs' own assigner speaks a protocol no other
// client offers, so this only works through the binding's `range` assigner.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp, EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { pythonPeer } from '../../../test/interop/support/python-peer.js';
import { Lab, kafka, uniqueQueue, until } from './support/kafka-lab.js';

const URN = 'urn:babel:interop:order-placed';
const peer = kafka.skip ? { skip: kafka.skip, run: async () => undefined } : pythonPeer('kafka mixed group (Python SDK)');

describe('interop over Kafka: a consumer group shared by the Python SDK and TypeScript', { skip: kafka.skip || peer.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('both members get partitions and every record is handled exactly once between them', async () => {
    const topic = await lab.topic('mixed', 2);
    const groupId = uniqueQueue('mixed-group');
    const perPartition = 10;
    const seen: string[] = [];
    const app = createApp({ transport: lab.transport({ groupId }), queue: topic, logger: silentLogger })
      .handle(URN, (_d, m) => void seen.push(m.id));
    const stop = new AbortController();
    const run = app.run({ signal: stop.signal, concurrency: 2 });
    try {
      // Python stops once it handled its partition's records (range gives each member one);
      // its idle timeout only ends a failing run.
      const python = peer.run(['consume', '--url', lab.url, '--queue', topic, '--urn', URN, '--group', groupId, '--max', String(perPartition), '--timeout', '30']);
      // Publish only once both members hold a partition (the group settled on `range`), however long the Python start took.
      const admin = await lab.admin();
      await until(async () => {
        const [group] = (await admin.describeGroups([groupId])).groups;
        return group?.state === 'Stable' && group.protocol === 'range' && group.members.length === 2;
      }, 60_000, 'a stable group of two members');
      const ids = new Set<string>();
      await lab.produce(topic, Array.from({ length: 2 * perPartition }, (_, i) => {
        const env = EnvelopeCodec.make(URN, { i }, { queue: topic });
        ids.add(env.meta.id);
        return { value: Buffer.from(EnvelopeCodec.encode(env)), partition: i % 2 };
      }));
      const pythonSaw = ((await python) as { handled: { envelope: { meta: { id: string } } }[] }).handled.map((h) => h.envelope.meta.id);
      await until(() => seen.length + pythonSaw.length >= ids.size, 30_000, 'every record');
      assert.ok(seen.length > 0 && pythonSaw.length > 0, `both members handled records (TypeScript ${seen.length}, Python ${pythonSaw.length})`);
      assert.deepEqual(new Set([...seen, ...pythonSaw]), ids);
      assert.equal(seen.length + pythonSaw.length, ids.size, 'no record handled twice');
    } finally {
      stop.abort();
      await run;
    }
  });
});
