// Smoke: the lab's Kafka (KRaft, auto-created topics) takes and gives back one
// record through kafkajs, with its headers.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel, Partitioners, type KafkaMessage } from 'kafkajs';
import { broker, uniqueQueue } from '../support/brokers.js';
import { within } from '../support/until.js';

const b = broker('kafka');

describe('smoke: kafka', { skip: b.skip }, () => {
  let kafka: Kafka;
  before(() => {
    const url = new URL(b.url!);
    kafka = new Kafka({ clientId: 'babelqueue-smoke', brokers: [url.host], logLevel: logLevel.NOTHING });
  });

  it('produces a record and a consumer group reads the same bytes and headers', async () => {
    const topic = uniqueQueue('smoke-kafka');
    const body = Buffer.from('{"job":"urn:babel:smoke:ping","data":{"s":"é"}}');
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true });
    await producer.connect();
    try {
      await producer.send({ topic, messages: [{ key: 'k1', value: body, headers: { 'bq-urn': 'urn:babel:smoke:ping' } }] });
    } finally {
      await producer.disconnect();
    }

    const consumer = kafka.consumer({ groupId: `${topic}-group` });
    let got: KafkaMessage;
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      got = await within(new Promise<KafkaMessage>((resolve) => {
        void consumer.run({ autoCommit: true, eachMessage: async ({ message }) => resolve(message) });
      }), 30_000, 'the record');
    } finally {
      await consumer.disconnect();
    }
    assert.deepEqual(got.value, body);
    assert.equal(got.key?.toString(), 'k1');
    assert.equal(got.headers?.['bq-urn']?.toString(), 'urn:babel:smoke:ping');
  });
});
