import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_RETRY_TIERS_MS,
  parseRetryTopic,
  retryTopicName,
  tierForDelay,
  tierForRetry,
  validateRetryTiers,
} from '../src/index.js';

describe('retry tiers', () => {
  it('exposes the recommended tiers', () => {
    assert.deepEqual([...DEFAULT_RETRY_TIERS_MS], [5000, 30000, 300000, 1800000]);
    assert.ok(Object.isFrozen(DEFAULT_RETRY_TIERS_MS), "Object.isFrozen(DEFAULT_RETRY_TIERS_MS)");
  });

  it('names tier topics <topic>.retry.<n> with n starting at 1', () => {
    assert.equal(retryTopicName('orders', 1), 'orders.retry.1');
    assert.deepEqual(parseRetryTopic('orders.retry.3'), { topic: 'orders', index: 3 });
    assert.deepEqual(parseRetryTopic('a.retry.b.retry.12'), { topic: 'a.retry.b', index: 12 });
    for (const name of ['orders', 'orders.retry.0', 'orders.retry.', 'orders.retry.5000x', 'orders.dlq']) {
      assert.equal(parseRetryTopic(name), undefined, name);
    }
  });

  // Rule 1: retry of a failed record — tier n = min(attempts_before + 1, tier count).
  const retryRows: [attemptsAfter: number, tier: number][] = [
    [1, 1],
    [2, 2],
    [3, 3],
    [4, 4],
    [5, 4],
    [40, 4],
  ];
  for (const [attempts, tier] of retryRows) {
    it(`a retry carrying attempts=${attempts} goes to tier ${tier}`, () => {
      const t = tierForRetry('orders', DEFAULT_RETRY_TIERS_MS, attempts);
      assert.equal(t.index, tier);
      assert.equal(t.topic, `orders.retry.${tier}`);
      assert.equal(t.delayMs, DEFAULT_RETRY_TIERS_MS[tier - 1]);
    });
  }

  // Rule 2: a delay — the smallest tier whose delay covers it; above the largest, refused.
  const delayRows: [delayMs: number, tier: number][] = [
    [1, 1],
    [5000, 1],
    [5001, 2],
    [30000, 2],
    [120000, 3],
    [1800000, 4],
  ];
  for (const [delay, tier] of delayRows) {
    it(`a delay of ${delay} ms goes to tier ${tier}`, () => {
      assert.equal(tierForDelay('orders', DEFAULT_RETRY_TIERS_MS, delay).index, tier);
    });
  }

  it('keeps the two rules apart: the third retry is tier 3 while a 1 ms delay is tier 1', () => {
    assert.equal(tierForRetry('q', [100, 200, 300], 3).index, 3);
    assert.equal(tierForDelay('q', [100, 200, 300], 1).index, 1);
  });

  it('refuses a delay above the largest tier or without tiers, naming the fix', () => {
    assert.throws(() => tierForDelay('q', [100, 200], 201), /exceeds the largest retry tier \(200 ms\)/);
    assert.throws(() => tierForDelay('q', [], 1), (e: Error) => e.name === 'CapabilityError' && /retryTiersMs/.test(e.message));
    assert.throws(() => tierForRetry('q', [], 1), /no retry tiers/);
  });

  it('validates tier lists', () => {
    assert.deepEqual([...validateRetryTiers([500, 1000])], [500, 1000]);
    assert.deepEqual([...validateRetryTiers([])], []);
    for (const bad of [[0], [-5], [1.5], [1000, 500], [500, 500], [Number.NaN]]) {
      assert.throws(() => validateRetryTiers(bad), (e: Error) => e.name === 'ConfigurationError', JSON.stringify(bad));
    }
  });
});
