/** The host list of a RabbitMQ URL (no broker needed): parsing and masking. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigurationError } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { amqpUrls, maskAmqpUrl } from '../src/url.js';

describe('RabbitMQ host list in the URL', () => {
  it('one URL per host, sharing credentials, vhost and query, in the order written', () => {
    assert.deepEqual(amqpUrls('amqp://u:p@h1:5672,h2,[::1]:5673/vh?heartbeat=10'), [
      'amqp://u:p@h1:5672/vh?heartbeat=10',
      'amqp://u:p@h2/vh?heartbeat=10',
      'amqp://u:p@[::1]:5673/vh?heartbeat=10',
    ]);
    assert.deepEqual(amqpUrls('amqps://h1'), ['amqps://h1']);
  });

  it('refuses an empty host, another scheme or a bad port, never repeating the password', () => {
    for (const [url, why] of [
      ['amqp://u:s3cret@h1,,h2/', /empty host/],
      ['http://u:s3cret@h1,h2/', /starts with amqp:\/\/ or amqps:\/\//],
      ['amqp://u:s3cret@h1:notaport,h2/', /not a valid AMQP URL/],
    ] as const) {
      assert.throws(() => new RabbitMqTransport({ url }), (e: unknown) =>
        e instanceof ConfigurationError && why.test(e.message) && !e.message.includes('s3cret'));
    }
  });

  it('masks the password and keeps the list in what it logs', () => {
    assert.equal(maskAmqpUrl('amqp://guest:guest@h1:5691,h2:5692/'), 'amqp://guest:***@h1:5691,h2:5692/');
    assert.equal(maskAmqpUrl('amqp://token@h1,h2'), 'amqp://***@h1,h2/');
    assert.equal(new RabbitMqTransport({ url: 'amqp://guest:guest@h1:5691,h2:5692' }).target, 'amqp://guest:***@h1:5691,h2:5692/');
  });
});
