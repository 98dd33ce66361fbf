// One consumer group with a Python member and a TypeScript member at the same
// time (the cross-language scenarios, one side after the other, live in
// test/interop/kafka.test.ts). kafkajs' own assigner speaks a protocol no other
// client offers, so this only works through the binding's `range` assigner.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, silentLogger } from '@babelqueue/core';
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

  it('both members get partitions and every record is handled exactly once between them', async () => {
    const topic = await lab.topic('mixed', 2);
    const groupId = uniqueQueue('mixed-group');
    const n = 20;
    const seen: string[] = [];
    const app = createApp({ transport: lab.transport({ groupId }), queue: topic, logger: silentLogger })
      .handle(URN, (_d, m) => void seen.push(m.id));
    const stop = new AbortController();
    const run = app.run({ signal: stop.signal, concurrency: 2 });
    const python = peer.run(['consume', '--url', lab.url, '--queue', topic, '--urn', URN, '--group', groupId, '--max', String(n), '--timeout', '8']);
    await new Promise((r) => setTimeout(r, 5000)); // both members joined; the group settled on `range`
    const producer = createApp({ transport: lab.transport(), queue: topic, logger: silentLogger });
    const ids = new Set<string>();
    for (let i = 0; i < n; i++) ids.add(await producer.publish(URN, { i }, { key: `k${i}` }));
    await producer.close();
    const pythonSaw = ((await python) as { handled: { envelope: { meta: { id: string } } }[] }).handled.map((h) => h.envelope.meta.id);
    await until(() => seen.length + pythonSaw.length >= n, 20_000, 'every record');
    stop.abort();
    await run;
    assert.ok(seen.length > 0 && pythonSaw.length > 0, `both members handled records (TypeScript ${seen.length}, Python ${pythonSaw.length})`);
    assert.deepEqual(new Set([...seen, ...pythonSaw]), ids);
    assert.equal(seen.length + pythonSaw.length, n, 'no record handled twice');
  });
});
