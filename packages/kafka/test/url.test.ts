import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transportFromUrl as coreTransportFromUrl } from '@babelqueue/core';
import { DEFAULT_RETRY_TIERS_MS, KafkaTransport, kafkaTransportFromUrl, parseKafkaUrl, transportFromUrl } from '../src/index.js';

describe('kafka:// URLs', () => {
  it('reads one or several bootstrap servers, defaulting the port to 9092', () => {
    assert.deepEqual(parseKafkaUrl('kafka://127.0.0.1:9092').brokers, ['127.0.0.1:9092']);
    assert.deepEqual(parseKafkaUrl('kafka://a:9092,b:9093').brokers, ['a:9092', 'b:9093']);
    assert.deepEqual(parseKafkaUrl('kafka://a').brokers, ['a:9092']);
    assert.deepEqual(parseKafkaUrl(new URL('kafka://a:1/?brokers=b:2,c')).brokers, ['a:1', 'b:2', 'c:9092']);
  });

  it('reads groupId, clientId, retry tiers, ssl and SASL', () => {
    const s = parseKafkaUrl('kafka://u%40x:p%3Aw@h:1?groupId=g&clientId=c&retryTiersMs=500,1000&ssl=true&mechanism=SCRAM-SHA-512');
    assert.equal(s.groupId, 'g');
    assert.equal(s.clientId, 'c');
    assert.deepEqual(s.retryTiersMs, [500, 1000]);
    assert.equal(s.ssl, true);
    assert.deepEqual(s.sasl, { mechanism: 'scram-sha-512', username: 'u@x', password: 'p:w' });
    assert.deepEqual(parseKafkaUrl('kafka://h?retryTiersMs=default').retryTiersMs, DEFAULT_RETRY_TIERS_MS);
    assert.equal(parseKafkaUrl('kafka://h?ordering=none').ordering, 'none');
  });

  it('refuses what it cannot use, without echoing a password', () => {
    assert.throws(() => parseKafkaUrl('redis://h:1'), /not a kafka:\/\/ URL/);
    assert.throws(() => parseKafkaUrl('kafka://'), /names no broker/);
    assert.throws(() => parseKafkaUrl('kafka://u:secret@h?mechanism=gssapi'), (e: Error) => /gssapi/.test(e.message) && !/secret/.test(e.message));
    assert.throws(() => new KafkaTransport({}), /needs `brokers`/);
    assert.throws(() => kafkaTransportFromUrl('kafka://h?ordering=random'), /ordering must be partition, key, none/);
  });

  it('builds a transport whose capabilities follow the tiers', async () => {
    const plain = kafkaTransportFromUrl('kafka://127.0.0.1:9092');
    assert.equal(plain.rules.name, 'kafka');
    assert.deepEqual(plain.capabilities, { delayedPublish: false, delayedRetry: false, retry: false, headers: true });
    const tiered = transportFromUrl(new URL('kafka://127.0.0.1:9092?retryTiersMs=500,1000&groupId=g'));
    assert.deepEqual(tiered.capabilities, { delayedPublish: true, delayedRetry: false, retry: true, headers: true });
    assert.deepEqual([...tiered.retryTiersMs], [500, 1000]);
    assert.equal(tiered.groupId, 'g');
    assert.throws(() => kafkaTransportFromUrl('kafka://h?retryTiersMs=500,100'), /ascending/);
    await Promise.all([plain.close(), tiered.close()]);
  });

  it('is what the core URL registry builds for kafka://', async () => {
    const t = await coreTransportFromUrl('kafka://127.0.0.1:9092?groupId=from-registry');
    assert.equal(t.rules.name, 'kafka');
    assert.equal((t as KafkaTransport).groupId, 'from-registry');
    await t.close();
  });

  it('declares the Kafka settlement rules of the spec', () => {
    const t = new KafkaTransport({ brokers: ['127.0.0.1:9092'] });
    assert.deepEqual(t.rules, {
      name: 'kafka',
      poisonWithoutDeadLetter: 'bounded-retry',
      deleteStrategyDropsPoison: true,
      versionGateWithoutDeadLetter: 'bounded-retry',
      attempts: { kind: 'native-else-body', native: 'bq-attempts' },
      delayAdvice: 'on Kafka the retry tier decides the delay (retryTiersMs)',
      retryPathAdvice: 'on Kafka that stalls the partition; configure retry tiers (retryTiersMs: DEFAULT_RETRY_TIERS_MS)',
    });
  });
});
