/**
 * Each binding declares its variant of the spec's consume rules; the core's
 * settlement table (conformance/settlement.json) runs every rule against those
 * presets. This test ties the two: a binding that declares anything else fails.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { ArtemisTransport } from '@babelqueue/artemis';
import { InMemoryTransport, type Transport } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { KafkaTransport } from '@babelqueue/kafka';
import { PulsarTransport } from '@babelqueue/pulsar';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { RedisTransport } from '@babelqueue/redis';
import { SqsTransport } from '@babelqueue/sqs';

interface Preset {
  rules: Record<string, unknown>;
  capabilities: { retry: boolean; delayedRetry: boolean; delayedPublish: boolean };
  dlq: string;
}
const table = JSON.parse(readFileSync(join(import.meta.dirname, '../../conformance/settlement.json'), 'utf8')) as {
  bindings: Record<string, Preset>;
};

const lazyRedis = () => new Redis({ lazyConnect: true, enableOfflineQueue: false });
const transports: [string, () => Transport][] = [
  ['memory', () => new InMemoryTransport()],
  ['redis-legacy', () => new RedisTransport({ redis: lazyRedis(), layout: 'legacy' })],
  ['redis-zset', () => new RedisTransport({ redis: lazyRedis(), layout: 'zset' })],
  ['rabbitmq', () => new RabbitMqTransport({ url: 'amqp://127.0.0.1:1' })],
  ['kafka', () => new KafkaTransport({ url: 'kafka://127.0.0.1:1', retryTiersMs: [1000] })],
  ['kafka-no-tiers', () => new KafkaTransport({ url: 'kafka://127.0.0.1:1' })],
  ['sqs', () => new SqsTransport({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' })],
  ['pulsar', () => new PulsarTransport({ url: 'pulsar://127.0.0.1:1?http=1' })],
  ['artemis', () => new ArtemisTransport({ url: 'artemis://127.0.0.1:1' })],
  ['asb', () => new AzureServiceBusTransport({ connectionString: 'Endpoint=sb://127.0.0.1:1/;SharedAccessKeyName=k;SharedAccessKey=v' })],
];

describe('each binding declares exactly the rules the settlement table runs', () => {
  for (const [name, make] of transports) {
    test(name, async () => {
      const preset = table.bindings[name];
      assert.ok(preset, `the table has a ${name} preset`);
      const transport = make();
      try {
        const { name: _name, dlqName: _dlqName, ...rules } = transport.rules;
        assert.deepEqual(rules, preset.rules);
        assert.equal(transport.capabilities.retry, preset.capabilities.retry);
        assert.equal(transport.capabilities.delayedRetry, preset.capabilities.delayedRetry);
        assert.equal(transport.capabilities.delayedPublish, preset.capabilities.delayedPublish);
        assert.equal(transport.rules.dlqName?.('q', undefined) ?? 'q.dlq', `q${preset.dlq}`);
      } finally {
        await transport.close();
      }
    });
  }
});
