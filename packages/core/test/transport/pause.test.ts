import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { pause } from '@babelqueue/core';

/** Lets every queued promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('pause(ms, ...signals)', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  /** The promise's outcome so far: 'pending', or what it resolved with. */
  function watch(promise: Promise<boolean>): () => boolean | 'pending' {
    let outcome: boolean | 'pending' = 'pending';
    void promise.then((value) => (outcome = value));
    return () => outcome;
  }

  const cases: [name: string, signals: number, abortAt: number | undefined, abortWhich: number, resolvesAt: number, result: boolean][] = [
    ['no signal: resolves true once the time ran out', 0, undefined, 0, 100, true],
    ['one signal, never aborted: true after the time', 1, undefined, 0, 100, true],
    ['one signal aborted midway: false at the abort', 1, 40, 0, 40, false],
    ['two signals, the second aborted midway: false at the abort', 2, 60, 1, 60, false],
  ];
  for (const [name, count, abortAt, which, resolvesAt, result] of cases) {
    test(name, async () => {
      const controllers = Array.from({ length: count }, () => new AbortController());
      const outcome = watch(pause(100, ...controllers.map((c) => c.signal)));
      for (let now = 1; now <= 100; now++) {
        mock.timers.tick(1);
        if (now === abortAt) controllers[which]!.abort();
        await settle();
        assert.equal(outcome(), now < resolvesAt ? 'pending' : result, `at ${now} ms`);
      }
    });
  }

  test('an already aborted signal resolves false at once, without waiting', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = watch(pause(5000, new AbortController().signal, controller.signal));
    await settle();
    assert.equal(outcome(), false);
  });

  test('0 ms still waits for a timer (a loop that pauses 0 yields to I/O)', async () => {
    const outcome = watch(pause(0, new AbortController().signal));
    await settle();
    assert.equal(outcome(), 'pending');
    mock.timers.tick(0);
    await settle();
    assert.equal(outcome(), true);
  });

  test('a long-lived signal keeps no listener once a pause is over (a retry loop pauses on it many times)', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 3; i++) {
      const done = pause(10, controller.signal);
      assert.equal(getEventListeners(controller.signal, 'abort').length, 1, 'one listener while the pause runs');
      mock.timers.tick(10);
      assert.equal(await done, true);
      assert.equal(getEventListeners(controller.signal, 'abort').length, 0, 'the listener is gone once the time ran out');
    }
  });

  test('an abort after the time ran out changes nothing', async () => {
    const controller = new AbortController();
    const outcome = watch(pause(10, controller.signal));
    mock.timers.tick(10);
    controller.abort();
    await settle();
    assert.equal(outcome(), true);
  });
});
