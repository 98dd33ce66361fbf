import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_RECONNECT_BACKOFF, reconnectDelayMs, resolveReconnectBackoff, type ResolvedReconnectBackoff } from '@babelqueue/core';

describe('reconnect back-off: delay before attempt n = min(maxDelayMs, initialDelayMs × multiplier^(n−1))', () => {
  test('the defaults are 100 ms, doubling, at most 5 s', () => {
    assert.deepEqual({ ...DEFAULT_RECONNECT_BACKOFF }, { initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2 });
    assert.ok(Object.isFrozen(DEFAULT_RECONNECT_BACKOFF), 'the shared defaults cannot be changed by a caller');
  });

  const rows: [attempt: number, expected: number][] = [
    [1, 100],
    [2, 200],
    [3, 400],
    [4, 800],
    [5, 1600],
    [6, 3200],
    [7, 5000],
    [8, 5000],
    [2000, 5000],
    [0, 100],
    [-1, 100],
  ];
  for (const [attempt, expected] of rows) {
    test(`defaults: attempt ${attempt} waits ${expected} ms`, () => {
      assert.equal(reconnectDelayMs(DEFAULT_RECONNECT_BACKOFF, attempt), expected);
    });
  }

  test('a growth past what a number holds gives the cap; an uncapped back-off keeps growing', () => {
    assert.equal(reconnectDelayMs({ initialDelayMs: 100, maxDelayMs: 5000, multiplier: 10 }, 400), 5000);
    assert.equal(reconnectDelayMs({ initialDelayMs: 200, maxDelayMs: Infinity, multiplier: 2 }, 4), 1600);
  });

  test('multiplier 1 is a constant delay, initial 0 never waits, the result is not rounded', () => {
    assert.equal(reconnectDelayMs({ initialDelayMs: 250, maxDelayMs: 5000, multiplier: 1 }, 9), 250);
    assert.equal(reconnectDelayMs({ initialDelayMs: 0, maxDelayMs: 5000, multiplier: 2 }, 9), 0);
    assert.equal(reconnectDelayMs({ initialDelayMs: 100, maxDelayMs: 5000, multiplier: 1.5 }, 3), 225);
    assert.equal(reconnectDelayMs({ initialDelayMs: 0.5, maxDelayMs: 5000, multiplier: 1 }, 1), 0.5);
  });

  test('resolveReconnectBackoff fills only what is missing (an explicit 0 stays 0)', () => {
    assert.deepEqual(resolveReconnectBackoff(), { initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2 });
    assert.deepEqual(resolveReconnectBackoff({ maxDelayMs: 800 }), { initialDelayMs: 100, maxDelayMs: 800, multiplier: 2 });
    assert.deepEqual(resolveReconnectBackoff({ initialDelayMs: 0, maxDelayMs: 0, multiplier: 0 }), { initialDelayMs: 0, maxDelayMs: 0, multiplier: 0 });
  });

  // The formulas the bindings wrote for themselves before they shared this one,
  // each beside the back-off and attempt number its binding now passes: the
  // delays must stay the same for every consecutive failure.
  const before = (failures: number) => failures - 1;
  const backoff = (initialDelayMs: number, maxDelayMs: number, multiplier = 2): ResolvedReconnectBackoff => ({ initialDelayMs, maxDelayMs, multiplier });
  const replaced: [name: string, old: (failures: number) => number, now: (failures: number) => number][] = [
    [
      'artemis/pulsar/rabbitmq connection, pulsar consume loop: initial × multiplier^max(0, failures − 1)',
      (f) => Math.min(5000, 100 * 2 ** Math.max(0, f - 1)),
      (f) => reconnectDelayMs(DEFAULT_RECONNECT_BACKOFF, f),
    ],
    [
      'rabbitmq consumer channel: initial × multiplier^(failures before this one), now attempt (failures before) + 1',
      (f) => Math.min(5000, 100 * 2 ** before(f)),
      (f) => reconnectDelayMs(DEFAULT_RECONNECT_BACKOFF, before(f) + 1),
    ],
    ['sqs call retry: min(5000, 100 × 2^min(failures − 1, 6))', (f) => Math.min(5000, 100 * 2 ** Math.min(f - 1, 6)), (f) => reconnectDelayMs(backoff(100, 5000), f)],
    ['redis reserve retry: min(1000, 50 × 2^failures)', (f) => Math.min(1000, 50 * 2 ** f), (f) => reconnectDelayMs(backoff(100, 1000), f)],
    ['kafka start-up step: 200 × 2^(attempt − 1)', (f) => 200 * 2 ** (f - 1), (f) => reconnectDelayMs(backoff(200, Infinity), f)],
    ['service bus receive: 100 ms doubling, capped at 5 s', doubling(100, 5000), (f) => reconnectDelayMs(backoff(100, 5000), f)],
    ['service bus connect: 100 ms doubling, capped at 1 s', doubling(100, 1000), (f) => reconnectDelayMs(backoff(100, 1000), f)],
  ];
  for (const [name, old, now] of replaced) {
    test(`same delays as before: ${name}`, () => {
      for (let failures = 1; failures <= 40; failures++) assert.equal(now(failures), old(failures), `after ${failures} failures`);
    });
  }
});

/** The n-th pause of a loop that starts at `first` and doubles after each failure, capped at `max`. */
function doubling(first: number, max: number): (failures: number) => number {
  return (failures) => {
    let waitMs = first;
    for (let i = 1; i < failures; i++) waitMs = Math.min(waitMs * 2, max);
    return waitMs;
  };
}
