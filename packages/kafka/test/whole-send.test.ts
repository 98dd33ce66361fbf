import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import type { Producer } from 'kafkajs';
import { KafkaConnection } from '../src/connection.js';
import { sendWhole } from '../src/whole-send.js';
import { Lab, kafka } from './support/kafka-lab.js';

/** A kafkajs error of `name` (the shape its retrier rejects with). */
const kafkaError = (name: string) => Object.assign(new Error(`${name}: the connection dropped`), { name });

describe('a produce call is retried whole (sendWhole)', () => {
  it('a retriable failure (kafkajs out of its own zero retries) runs the whole call again, on kafkajs\'s schedule', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await sendWhole(async () => {
      calls += 1;
      if (calls < 3) throw kafkaError('KafkaJSNumberOfRetriesExceeded');
      return 'sent';
    }, { initialRetryTime: 100, multiplier: 2, factor: 0 }, async (ms) => void waits.push(ms));
    assert.equal(result, 'sent');
    assert.equal(calls, 3);
    assert.deepEqual(waits, [100, 200]);
  });

  it('a failure no retry cures (KafkaJSNonRetriableError: a refused record, a denied topic) fails at once', async () => {
    let calls = 0;
    const refused = kafkaError('KafkaJSNonRetriableError');
    await assert.rejects(sendWhole(async () => {
      calls += 1;
      throw refused;
    }, undefined, async () => undefined), (error) => error === refused);
    assert.equal(calls, 1);
  });

  it('after `retries` retries the last error is the call\'s', async () => {
    let calls = 0;
    await assert.rejects(sendWhole(async () => {
      calls += 1;
      throw kafkaError('KafkaJSNumberOfRetriesExceeded');
    }, { retries: 2 }, async () => undefined), { name: 'KafkaJSNumberOfRetriesExceeded' });
    assert.equal(calls, 3);
  });
});

describe('a produce call whose answer was lost, on the real broker', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('written, then failed as a dropped connection: the call is sent again whole, and every record is on the topic (twice, never missing)', async () => {
    // The fault a broker cannot give on demand (an answer lost after the write) is injected
    // around the real producer; the writes themselves reach the lab's Kafka.
    const topic = await lab.topic('whole-send', 3);
    const connection = new KafkaConnection({ url: lab.url, logger: silentLogger, kafka: { retry: { initialRetryTime: 50 } } });
    try {
      const producer: Producer = await connection.producer();
      const sendBatch = producer.sendBatch.bind(producer);
      let calls = 0;
      producer.sendBatch = async (batch) => {
        calls += 1;
        const written = await sendBatch(batch);
        if (calls === 1) throw kafkaError('KafkaJSNumberOfRetriesExceeded');
        return written;
      };
      const records = Array.from({ length: 30 }, (_, n) => ({ topic, key: null, value: Buffer.from(String(n)), headers: {} }));
      await connection.writeMany(records);
      assert.equal(calls, 2);
      const values = (await lab.read(topic, 60)).map((r) => r.value!.toString());
      assert.deepEqual([...new Set(values)].sort((a, b) => Number(a) - Number(b)), records.map((_, n) => String(n)));
      assert.equal(values.length, 60);
    } finally {
      await connection.close();
    }
  });
});
