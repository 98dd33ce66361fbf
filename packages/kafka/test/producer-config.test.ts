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
  it('idempotent, so a send retried after its leader died is written once; retries bounded as the client\'s', async () => {
    const config = await producerConfig({ url: 'kafka://127.0.0.1:19092,127.0.0.1:19192,127.0.0.1:19292' });
    assert.equal(config?.idempotent, true);
    assert.equal(config?.retry?.retries, 5, 'kafkajs would retry an idempotent send forever: a publish must fail while no leader takes it');
    const custom = await producerConfig({ brokers: ['127.0.0.1:9092'], kafka: { retry: { retries: 9 } } });
    assert.equal(custom?.retry?.retries, 9);
  });

});
