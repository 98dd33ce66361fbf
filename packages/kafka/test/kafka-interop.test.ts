// Interop with the official Python SDK's Kafka transport (babelqueue[kafka] over
// confluent-kafka) on the lab's Kafka: both directions, one consumer group shared
// by a Python and a TypeScript member, and retries crossing the language boundary
// through the retry tiers and each SDK's re-inject consumer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, silentLogger, type Message } from '@babelqueue/core';
import { Lab, kafka, text, uniqueQueue, until } from './support/kafka-lab.js';
import { pythonKafka } from './support/python-kafka.js';

const URN = 'urn:babel:interop:order-placed';
const DATA = { order_id: 1042, customer: 'Zoë', lines: [{ sku: 'A-1', qty: 2, price: 0.5 }], gift: false, note: null };
const py = pythonKafka();

describe('interop over Kafka: Python SDK <-> TypeScript', { skip: kafka.skip || py.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());

  it('Python -> TypeScript: the value byte for byte, the bq- headers, the envelope', async () => {
    const topic = await lab.topic('py2ts');
    const sent = await py.run(['publish', lab.url, topic, URN, JSON.stringify(DATA)]);
    const [raw] = await lab.read(topic, 1);
    assert.equal(text(raw!.headers, 'bq-job'), URN);
    assert.equal(text(raw!.headers, 'bq-message-id'), sent.id);
    assert.equal(text(raw!.headers, 'bq-schema-version'), '1');
    assert.equal(text(raw!.headers, 'bq-source-lang'), 'python');
    assert.equal(text(raw!.headers, 'bq-attempts'), '0');

    const seen: Message[] = [];
    const app = createApp({ transport: lab.transport(), queue: topic, logger: silentLogger }).handle(URN, (_d, m) => void seen.push(m));
    assert.equal(await app.consume({ maxMessages: 1 }), 1);
    await app.close();
    const [m] = seen;
    assert.ok(m!.body.equals(raw!.value!), 'delivered as the Python SDK wrote it');
    assert.equal(m!.id, sent.id);
    assert.deepEqual(m!.data, DATA);
    assert.equal(m!.envelope.meta.lang, 'python');
    assert.equal(m!.attempts, 1);
  });

  it('TypeScript -> Python: the Python SDK decodes our record', async () => {
    const topic = await lab.topic('ts2py');
    const app = createApp({ transport: lab.transport(), queue: topic, logger: silentLogger });
    const id = await app.publish(URN, DATA, { key: 'customer-7' });
    await app.close();
    const got = await py.run(['consume', lab.url, topic, URN, uniqueQueue('pyg'), '1', '30']);
    assert.equal(got.handled.length, 1);
    assert.equal(got.handled[0].id, id);
    assert.equal(got.handled[0].lang, 'node');
    assert.equal(got.handled[0].attempts, 0);
    assert.deepEqual(got.handled[0].data, DATA);
  });

  it('one consumer group, a Python member and a TypeScript member: the partitions are shared, every record handled once', async () => {
    const topic = await lab.topic('mixed', 2);
    const groupId = uniqueQueue('mixed-group');
    const n = 20;
    const seen: string[] = [];
    const app = createApp({ transport: lab.transport({ groupId }), queue: topic, logger: silentLogger }).handle(URN, (_d, m) => void seen.push(m.id));
    const stop = new AbortController();
    const run = app.run({ signal: stop.signal, concurrency: 2 });
    const python = py.run(['consume', lab.url, topic, URN, groupId, String(n), '25']);
    await new Promise((r) => setTimeout(r, 5000)); // both members joined the group
    const producer = createApp({ transport: lab.transport(), queue: topic, logger: silentLogger });
    const ids = new Set<string>();
    for (let i = 0; i < n; i++) ids.add(await producer.publish(URN, { i }, { key: `k${i}` }));
    await producer.close();
    const pythonSaw = ((await python).handled as { id: string }[]).map((h) => h.id);
    await until(() => seen.length + pythonSaw.length >= n, 20_000, 'every record');
    stop.abort();
    await run;
    assert.ok(seen.length > 0 && pythonSaw.length > 0, `both members handled records (ts ${seen.length}, python ${pythonSaw.length})`);
    assert.deepEqual(new Set([...seen, ...pythonSaw]), ids);
    assert.equal(seen.length + pythonSaw.length, n, 'no record handled twice');
  });

  it('a retry crosses languages: Python fails once onto tier 1, our re-inject consumer brings it back, TypeScript sees attempts 1', async () => {
    const topic = await lab.topic('retry-py');
    const sent = await py.run(['publish', lab.url, topic, URN, JSON.stringify(DATA)]);
    const failed = await py.run(['consume', lab.url, topic, URN, uniqueQueue('pyg'), '1', '30', '--fail', '1', '--tiers', '[500]']);
    assert.equal(failed.handled.length, 1);
    const seen: Message[] = [];
    const groupId = uniqueQueue('ts-after-py');
    const app = createApp({ transport: lab.transport({ groupId, retryTiersMs: [500] }), queue: topic, logger: silentLogger })
      .handle(URN, (_d, m) => void seen.push(m));
    const stop = new AbortController();
    const run = app.run({ signal: stop.signal });
    await until(() => seen.some((m) => m.envelope.attempts === 1), 20_000, 'the re-injected retry');
    stop.abort();
    await run;
    const retried = seen.find((m) => m.envelope.attempts === 1)!;
    assert.equal(retried.id, sent.id);
    assert.equal(retried.attempts, 2, 'counted attempt: bq-attempts 1 + 1');
    assert.equal(retried.headers['bq-attempts'], '1');
    assert.deepEqual(retried.data, DATA);
  });

  it('a retry crosses languages: TypeScript fails once onto tier 1, the Python re-injector brings it back, Python sees attempts 1', async () => {
    const topic = await lab.topic('retry-ts');
    let fails = 1;
    const app = createApp({ transport: lab.transport({ retryTiersMs: [500], reinject: false }), queue: topic, logger: silentLogger })
      .handle(URN, () => {
        if (fails-- > 0) throw new Error('typescript fails on purpose');
      });
    const id = await app.publish(URN, DATA, { key: 'k' });
    await app.consume({ maxMessages: 1 });
    await app.close();
    const moved = await py.run(['reinject', lab.url, topic, '[500]', '1', '30']);
    assert.equal(moved.reinjected, 1);
    const got = await py.run(['consume', lab.url, topic, URN, uniqueQueue('pyg'), '2', '30']);
    const retried = (got.handled as { id: string; attempts: number }[]).find((h) => h.attempts === 1);
    assert.ok(retried, 'Python handled the retried copy');
    assert.equal(retried.id, id);
  });
});
