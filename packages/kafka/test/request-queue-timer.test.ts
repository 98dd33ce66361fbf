import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '@babelqueue/core';
import { until } from '../../../test/support/until.js';
import { KafkaTransport } from '../src/index.js';
import { armRequestQueueTimerOnlyWhenNeeded } from '../src/request-queue-timer.js';
import { kafka, uniqueQueue } from './support/kafka-lab.js';

interface Queue {
  throttledUntil: number;
  pending: unknown[];
  checkPendingRequests(): void;
  push(request: object): void;
  destroy(): void;
}
const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as {
  new (options: object): Queue;
  prototype: Queue;
};

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const queue = () => new RequestQueue({ maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'test:9092', logger: quiet });

/** Counts the looks every kafkajs request queue of this process takes at its waiting requests. */
function countLooks(): { readonly n: number; stop(): void } {
  const original = RequestQueue.prototype.checkPendingRequests;
  let n = 0;
  RequestQueue.prototype.checkPendingRequests = function (this: Queue) {
    n += 1;
    original.call(this);
  };
  return {
    get n() {
      return n;
    },
    stop: () => void (RequestQueue.prototype.checkPendingRequests = original),
  };
}

// First, before any test patches kafkajs itself: the transport alone must make the change.
describe("kafkajs's request-queue timer, on the real broker", { skip: kafka.skip }, () => {
  let transport: KafkaTransport;
  after(() => transport?.close());

  it("a connected transport's idle connections take (almost) no looks", async () => {
    transport = new KafkaTransport({ url: kafka.url!, groupId: uniqueQueue('g'), logger: silentLogger });
    await transport.connect({ timeoutMs: 60_000 });
    await transport.publishRaw!(uniqueQueue('timer'), Buffer.from('{}'));
    const looks = countLooks();
    try {
      await sleep(1_000);
      // One look per answer that arrives; an idle producer gets none. Upstream: ~1,000 per connection.
      assert.ok(looks.n < 20, `${looks.n} looks in 1 s of idling`);
    } finally {
      looks.stop();
    }
  });
});

describe("kafkajs's request-queue timer runs only while requests wait", () => {
  before(() => armRequestQueueTimerOnlyWhenNeeded());

  it('an idle queue takes no look of its own (kafkajs 2.2.4 re-armed it every millisecond, forever)', async () => {
    const q = queue();
    const looks = countLooks();
    try {
      q.checkPendingRequests();
      await sleep(500);
      assert.equal(looks.n, 1, 'only the look the test asked for');
    } finally {
      looks.stop();
      q.destroy();
    }
  });

  it('a request held by a client-side throttle is sent once the throttle ends', async () => {
    const q = queue();
    try {
      const throttledUntil = Date.now() + 150;
      q.throttledUntil = throttledUntil;
      let sentAt: number | undefined;
      q.push({ entry: { correlationId: 1, apiKey: 0, apiName: 'Produce', apiVersion: 0, resolve: () => undefined, reject: () => undefined }, expectResponse: false, sendRequest: () => void (sentAt = Date.now()) });
      assert.equal(q.pending.length, 1, 'held while throttled');
      await until(() => sentAt !== undefined, 10_000, 'the held request to be sent');
      assert.ok(sentAt! >= throttledUntil, 'not before the throttle ended');
      assert.equal(q.pending.length, 0);
    } finally {
      q.destroy();
    }
  });
});
