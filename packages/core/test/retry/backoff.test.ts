import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RETRY_BACKOFF, resolveRetryBackoff, retryDelayMs } from '@babelqueue/core';

describe('retry backoff d(n) = min(max, base * multiplier^(n-1))', () => {
  test('the defaults keep every retry immediate', () => {
    assert.deepEqual({ ...DEFAULT_RETRY_BACKOFF }, { baseMs: 0, multiplier: 1, maxMs: Infinity });
    for (const n of [1, 2, 3, 10, 1000]) assert.equal(retryDelayMs(n), 0);
  });

  const backoff = { baseMs: 1000, multiplier: 2, maxMs: 10_000 };
  const rows: [number, number][] = [
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [4, 8000],
    [5, 10_000],
    [50, 10_000],
    [0, 1000],
    [-3, 1000],
    [Number.NaN, 1000],
    [2.7, 2000],
  ];
  for (const [n, expected] of rows) {
    test(`base 1000, x2, max 10000: d(${n}) = ${expected}`, () => assert.equal(retryDelayMs(n, backoff), expected));
  }

  test('a constant delay (multiplier 1) and a fractional result rounded to whole ms', () => {
    assert.equal(retryDelayMs(7, { baseMs: 250, multiplier: 1, maxMs: Infinity }), 250);
    assert.equal(retryDelayMs(2, { baseMs: 100, multiplier: 1.5, maxMs: Infinity }), 150);
    assert.equal(retryDelayMs(3, { baseMs: 100, multiplier: 1.55, maxMs: Infinity }), 240);
  });

  test('max 0 always gives 0; an overflow saturates instead of wrapping to 0', () => {
    assert.equal(retryDelayMs(5, { baseMs: 1000, multiplier: 2, maxMs: 0 }), 0);
    assert.equal(retryDelayMs(5000, { baseMs: 1000, multiplier: 10, maxMs: Infinity }), Number.MAX_SAFE_INTEGER);
  });

  test('resolveRetryBackoff fills the defaults and checks each field', () => {
    assert.deepEqual({ ...resolveRetryBackoff() }, { baseMs: 0, multiplier: 1, maxMs: Infinity });
    assert.deepEqual({ ...resolveRetryBackoff({ baseMs: 500, maxMs: undefined }) }, { baseMs: 500, multiplier: 1, maxMs: Infinity });
    assert.ok(Object.isFrozen(resolveRetryBackoff({ multiplier: 3 })), "Object.isFrozen(resolveRetryBackoff({ multiplier: 3 }))");
    for (const bad of [{ baseMs: -1 }, { baseMs: Infinity }, { multiplier: -2 }, { multiplier: Number.NaN }, { maxMs: -5 }, { maxMs: Number.NaN }]) {
      assert.throws(() => resolveRetryBackoff(bad), (err: unknown) => err instanceof RangeError && err.message.includes(Object.keys(bad)[0]!));
    }
  });
});
