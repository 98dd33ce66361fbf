import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigurationError, InMemoryTransport, maskUrl, transportFromUrl } from '@babelqueue/core';
import { registerTransport } from '@babelqueue/core/binding';

describe('transport from a URL', () => {
  test('memory:// transports with the same name share one broker', async () => {
    const a = (await transportFromUrl('memory://shared')) as InMemoryTransport;
    const b = (await transportFromUrl('memory://shared')) as InMemoryTransport;
    const c = (await transportFromUrl('memory://other')) as InMemoryTransport;
    await a.publishRaw('q', Buffer.from('x'));
    assert.equal(b.messages('q').length, 1);
    assert.equal(c.messages('q').length, 0);
  });

  test('a registered scheme wins', async () => {
    const mine = new InMemoryTransport();
    registerTransport('test-scheme', () => mine);
    assert.equal(await transportFromUrl('test-scheme://x'), mine);
  });

  test('an unknown scheme names the known ones', async () => {
    await assert.rejects(transportFromUrl('nats://127.0.0.1'), (e: Error) =>
      e instanceof ConfigurationError && /no transport is known for "nats:\/\/"/.test(e.message));
  });

  test('a malformed URL is a configuration error that does not echo credentials', async () => {
    await assert.rejects(transportFromUrl('::not a url user:pw@'), ConfigurationError);
    await assert.rejects(transportFromUrl('//user:hunter2@'), (e: Error) => !e.message.includes('hunter2'));
  });

  test('maskUrl hides the password or a lone token', () => {
    assert.equal(maskUrl('amqp://guest:guest@127.0.0.1:5672/vh'), 'amqp://guest:***@127.0.0.1:5672/vh');
    assert.equal(maskUrl('rediss://token@host:6380'), 'rediss://***@host:6380');
    assert.equal(maskUrl('redis://127.0.0.1:6379'), 'redis://127.0.0.1:6379');
    assert.equal(maskUrl('not a url'), '<unparseable URL>');
  });
});
