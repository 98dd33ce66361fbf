// A broker that just started loads its consumer groups: OffsetFetch answers
// NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS for a while, and kafkajs's
// admin gives up after its own few retries (a `dlq list` on a fresh Kafka
// failed so, twice in CI). The admin here is a fake: a real broker does not
// load on demand. The errors are the ones kafkajs builds from the broker's
// error codes, bare and wrapped as its retrier wraps them.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import kafkajs, { type Admin } from 'kafkajs';
import { waitingRanges } from '../src/scan.js';

// kafkajs's own table of Kafka error codes (not re-exported by its entry point).
const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { createErrorFromCode: (code: number) => Error };

// kafkajs is CommonJS: its error classes come off the default export.
const { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs;

/** The error kafkajs throws for Kafka error `code`: its protocol error, or that error after its retries ran out. */
function kafkaError(code: number, wrapped: boolean): Error {
  const protocol = new KafkaJSProtocolError(createErrorFromCode(code));
  return wrapped ? new KafkaJSNumberOfRetriesExceeded(protocol, { retryCount: 5, retryTime: 1000 }) : protocol;
}

function admin(failures: Error[]): Admin & { calls: number } {
  const fake = {
    calls: 0,
    listTopics: async () => ['t'],
    fetchTopicOffsets: async () => [{ partition: 0, offset: '5', high: '5', low: '0' }],
    fetchOffsets: async () => {
      fake.calls += 1;
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
      return [{ topic: 't', partitions: [{ partition: 0, offset: '2' }] }];
    },
  };
  return fake as unknown as Admin & { calls: number };
}

describe('Kafka scan: a group coordinator that is loading or moving', () => {
  it('reads the committed offsets again until the coordinator answers (codes 14, 15, 16, bare or after kafkajs\'s retries)', async () => {
    const fake = admin([kafkaError(14, false), kafkaError(16, true), kafkaError(15, false), kafkaError(16, false)]);
    assert.deepEqual(await waitingRanges(fake, 't', 'g'), [{ partition: 0, start: 2, end: 5 }]);
    assert.equal(fake.calls, 5);
  });

  it('any other error fails the read at once', async () => {
    const fake = admin([kafkaError(30, true)]); // GROUP_AUTHORIZATION_FAILED
    await assert.rejects(waitingRanges(fake, 't', 'g'), /not authorized to access group/i);
    assert.equal(fake.calls, 1);
  });
});
