import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { KafkaConnection, type KafkaRecord } from '../src/connection.js';
import { GATHER_BYTES, GatheredWrites, type ProduceCalls } from '../src/gathered-writes.js';
import { Lab, kafka, uniqueQueue } from './support/kafka-lab.js';

const record = (topic: string, n: number, bytes = 10): KafkaRecord => ({ topic, key: null, value: Buffer.alloc(bytes, n % 10), headers: { n: String(n) } });
const nOf = (r: KafkaRecord) => Number(r.headers.n);
/** A kafkajs error of `name` (the shape its retrier rejects with). */
const kafkaError = (name: string) => Object.assign(new Error(`${name}: the call failed`), { name });

/** Produce calls that record what they were given and answer with `answer` (a fault injected). */
function recording(answer: (records: readonly KafkaRecord[]) => Promise<void> = async () => undefined) {
  const calls: { kind: 'many' | 'one'; ns: number[] }[] = [];
  const produce: ProduceCalls<KafkaRecord> = {
    many: (_topic, records) => {
      calls.push({ kind: 'many', ns: records.map(nOf) });
      return answer(records);
    },
    one: (r) => {
      calls.push({ kind: 'one', ns: [nOf(r)] });
      return answer([r]);
    },
  };
  return { calls, produce };
}

describe('writes of one run of callbacks go out in one produce call per topic (GatheredWrites)', () => {
  it('records written to one topic together leave in one call, in the order written; each promise settles with the call', async () => {
    const { calls, produce } = recording();
    const gathered = new GatheredWrites<KafkaRecord>(produce);
    await Promise.all(Array.from({ length: 50 }, (_, n) => gathered.write(record('a', n))));
    assert.deepEqual(calls, [{ kind: 'many', ns: Array.from({ length: 50 }, (_, n) => n) }]);
  });

  it('a lone record goes by itself; records for two topics leave in a call each', async () => {
    const { calls, produce } = recording();
    const gathered = new GatheredWrites<KafkaRecord>(produce);
    await gathered.write(record('a', 1));
    await Promise.all([gathered.write(record('a', 2)), gathered.write(record('b', 3)), gathered.write(record('a', 4))]);
    assert.deepEqual(calls, [{ kind: 'one', ns: [1] }, { kind: 'many', ns: [2, 4] }, { kind: 'one', ns: [3] }]);
  });

  it(`no call carries more than ${GATHER_BYTES} bytes, and a record that size or larger goes by itself, after the records written before it`, async () => {
    const { calls, produce } = recording();
    const gathered = new GatheredWrites<KafkaRecord>(produce);
    const quarter = GATHER_BYTES / 4;
    await Promise.all([
      ...Array.from({ length: 6 }, (_, n) => gathered.write(record('a', n, quarter - 100))),
      gathered.write(record('a', 9, GATHER_BYTES)),
    ]);
    assert.deepEqual(calls, [{ kind: 'many', ns: [0, 1, 2, 3] }, { kind: 'many', ns: [4, 5] }, { kind: 'one', ns: [9] }]);
  });

  const failsWhole = [
    { why: 'its retries ran out', error: kafkaError('KafkaJSNumberOfRetriesExceeded') },
    { why: 'want of a connection', error: Object.assign(kafkaError('KafkaJSNonRetriableError'), { cause: kafkaError('KafkaJSConnectionError') }) },
  ];
  for (const { why, error } of failsWhole) {
    it(`a call that failed for ${why} fails every record it carried at once, without writing them one by one`, async () => {
      const { calls, produce } = recording(async () => {
        throw error;
      });
      const gathered = new GatheredWrites<KafkaRecord>(produce);
      const outcomes = await Promise.allSettled([gathered.write(record('a', 1)), gathered.write(record('a', 2))]);
      assert.deepEqual(outcomes.map((o) => o.status === 'rejected' && o.reason === error), [true, true]);
      assert.deepEqual(calls, [{ kind: 'many', ns: [1, 2] }]);
    });
  }

  it('a call the broker refused with an error no retry cures is split: each record is written by itself, in order, and settles with its own answer', async () => {
    // What kafkajs rejects a refused produce call with (its retries are off): the broker's error, not retriable.
    const refused = Object.assign(kafkaError('KafkaJSProtocolError'), { retriable: false });
    const { calls, produce } = recording(async (records) => {
      if (records.length > 1 || nOf(records[0]!) === 2) throw refused;
    });
    const gathered = new GatheredWrites<KafkaRecord>(produce);
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => gathered.write(record('a', n))));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(calls, [{ kind: 'many', ns: [1, 2, 3] }, { kind: 'one', ns: [1] }, { kind: 'one', ns: [2] }, { kind: 'one', ns: [3] }]);
  });
});

describe('gathered writes on the real broker', { skip: kafka.skip }, () => {
  let lab: Lab;
  let connection: KafkaConnection;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => connection?.close());

  it('a hundred records written in one tick reach the broker in one produce request, all there and in order', async () => {
    const topic = await lab.topic('gathered');
    connection = new KafkaConnection({ url: lab.url, logger: silentLogger });
    const producer = await connection.producer();
    let produceRequests = 0;
    producer.on(producer.events.REQUEST, (event) => {
      if (event.payload.apiName === 'Produce') produceRequests += 1;
    });
    await Promise.all(Array.from({ length: 100 }, (_, n) => connection.write(record(topic, n))));
    assert.equal(produceRequests, 1);
    const read = await lab.read(topic, 100);
    assert.deepEqual(read.map((r) => Number(r.headers!.n!.toString())), Array.from({ length: 100 }, (_, n) => n));
  });

  it('one record the topic refuses (no key on a compacted topic) fails alone; its neighbours of the same call are written', async () => {
    const topic = uniqueQueue('gathered-compacted');
    await lab.createTopics([{ topic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }]);
    connection = new KafkaConnection({ url: lab.url, logger: silentLogger });
    const keyed = (n: number): KafkaRecord => ({ ...record(topic, n), key: Buffer.from(`k${n}`) });
    const outcomes = await Promise.allSettled([connection.write(keyed(1)), connection.write(record(topic, 2)), connection.write(keyed(3))]);
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual((await lab.read(topic, 2)).map((r) => r.key!.toString()), ['k1', 'k3']);
    assert.equal(await lab.size(topic), 2);
  });

  it('records that each fit a topic\'s small max.message.bytes but not together are written one by one, all of them, in order', async () => {
    const topic = uniqueQueue('gathered-small');
    await lab.createTopics([{ topic, configEntries: [{ name: 'max.message.bytes', value: '2000' }] }]);
    connection = new KafkaConnection({ url: lab.url, logger: silentLogger });
    await Promise.all([1, 2, 3].map((n) => connection.write(record(topic, n, 1200))));
    assert.deepEqual((await lab.read(topic, 3)).map((r) => Number(r.headers!.n!.toString())), [1, 2, 3]);
  });
});
