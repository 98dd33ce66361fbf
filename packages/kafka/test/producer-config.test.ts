import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import type { ProducerConfig } from 'kafkajs';
import { KafkaConnection } from '../src/connection.js';

/** The producer config the connection asks kafkajs for (no broker: the producer is a stub). */
async function producerConfig(options: ConstructorParameters<typeof KafkaConnection>[0]): Promise<ProducerConfig | undefined> {
  const connection = new KafkaConnection({ logger: silentLogger, ...options });
  let config: ProducerConfig | undefined;
  (connection.kafka as { producer: (c?: ProducerConfig) => unknown }).producer = (c?: ProducerConfig) => {
    config = c;
    return { connect: async () => undefined, disconnect: async () => undefined };
  };
  await connection.producer();
  return config;
}

describe('Kafka producer settings', () => {
  it('not idempotent: kafkajs\'s idempotent producer lost acknowledged sends across a broker restart (out of order sequence numbers)', async () => {
    const config = await producerConfig({ url: 'kafka://127.0.0.1:19092,127.0.0.1:19192,127.0.0.1:19292' });
    assert.notEqual(config?.idempotent, true);
  });

  it('kafkajs\'s own retries off: it resends a call that spans several leaders to the brokers that did not answer only (sendWhole resends it whole)', async () => {
    const config = await producerConfig({ url: 'kafka://127.0.0.1:19092' });
    assert.equal(config?.retry?.retries, 0);
  });
});
