import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigurationError, silentLogger } from '@babelqueue/core';
import { RedisConfigError, resolveOptions } from '../src/options.js';
import { connect } from '../src/connection.js';

describe('redis transport options', () => {
  it('defaults: legacy layout, retryAfter 90, migration batch -1, 1 s block slices, no prefix, no replica wait', () => {
    assert.deepEqual(resolveOptions({}), { layout: 'legacy', retryAfter: 90, migrationBatchSize: -1, blockTimeoutS: 1, prefix: '', waitForReplicas: 0, waitForReplicasMs: 1000 });
  });

  it('a Sentinel URL waits for one replica by default; waitForReplicas is checked', () => {
    assert.equal(resolveOptions({ url: 'redis+sentinel://h:26379/m' }).waitForReplicas, 1);
    assert.equal(resolveOptions({ url: 'redis+sentinel://h:26379/m', waitForReplicas: 0 }).waitForReplicas, 0);
    assert.throws(() => resolveOptions({ waitForReplicas: -1 }), /waitForReplicas must be an integer >= 0/);
    assert.throws(() => resolveOptions({ waitForReplicasMs: 0 }), /waitForReplicasMs must be an integer >= 1/);
    assert.throws(() => resolveOptions({ cluster: true, waitForReplicas: 1 }), /not a Redis Cluster/);
  });

  it('retryAfter null disables recovery and 0 is allowed', () => {
    assert.equal(resolveOptions({ retryAfter: null }).retryAfter, null);
    assert.equal(resolveOptions({ retryAfter: 0 }).retryAfter, 0);
  });

  const bad: [string, Parameters<typeof resolveOptions>[0], RegExp][] = [
    ['a negative retryAfter', { retryAfter: -1 }, /retryAfter/],
    ['a NaN retryAfter', { retryAfter: Number.NaN }, /retryAfter/],
    ['an infinite retryAfter', { retryAfter: Infinity }, /retryAfter/],
    ['an unknown layout', { layout: 'stream' as never }, /layout/],
    ['migrationBatchSize 0', { migrationBatchSize: 0 }, /migrationBatchSize/],
    ['a fractional migrationBatchSize', { migrationBatchSize: 1.5 }, /migrationBatchSize/],
    ['blockTimeoutS 0 (would block forever)', { blockTimeoutS: 0 }, /blockTimeoutS/],
    ['blockTimeoutS above 1 s', { blockTimeoutS: 2 }, /blockTimeoutS/],
    ['both url and redis', { url: 'redis://x', redis: {} as never }, /either url or redis/],
  ];
  for (const [what, options, message] of bad) {
    it(`refuses ${what} as a configuration error`, () => {
      assert.throws(() => resolveOptions(options), (e: unknown) => e instanceof RedisConfigError && e instanceof ConfigurationError && message.test(e.message));
    });
  }

  it('refuses a URL that is not redis:// or rediss://', () => {
    assert.throws(() => connect('amqp://127.0.0.1', false, silentLogger), /redis:\/\/ or rediss:\/\//);
    assert.throws(() => connect('::not a url', false, silentLogger), RedisConfigError);
  });
});
