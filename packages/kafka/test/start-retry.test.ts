// A connection cut during the topic look-up at consume start must not end the
// worker: the step is tried again (found by the reliability suite, where kafkajs'
// admin threw "Cannot destructure property 'topicMetadata' … as it is null").
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { retryStart } from '../src/start-retry.js';
import { captureLogger } from '../../../test/support/capture-logger.js';

describe('Kafka start-up steps are tried again', () => {
  test('a step that fails twice (the TypeError kafkajs throws on a cut) succeeds on its third try, with a WARN line per failure', async () => {
    const logger = captureLogger();
    let calls = 0;
    const result = await retryStart(async () => {
      calls += 1;
      if (calls < 3) throw new TypeError("Cannot destructure property 'topicMetadata' of '(intermediate value)' as it is null.");
      return 'topics ready';
    }, new AbortController().signal, logger, 'topics');
    assert.equal(result, 'topics ready');
    assert.equal(calls, 3);
    assert.equal(logger.lines.filter((l) => l.level === 'warn' && l.message.startsWith('Kafka start-up step failed')).length, 2, 'one WARN line per failed try');
  });

  test('a step that keeps failing throws its own last error after five tries', async () => {
    let calls = 0;
    await assert.rejects(retryStart(async () => {
      calls += 1;
      throw new Error(`broker gone ${calls}`);
    }, new AbortController().signal, captureLogger(), 'topics'), /broker gone 5/);
    assert.equal(calls, 5);
  });

  test('an aborted consume start is not retried', async () => {
    const stop = new AbortController();
    stop.abort();
    let calls = 0;
    await assert.rejects(retryStart(async () => {
      calls += 1;
      throw new Error('cut');
    }, stop.signal, captureLogger(), 'topics'), /cut/);
    assert.equal(calls, 1);
  });
});
