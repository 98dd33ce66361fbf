import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { duplicate } from '../src/connection.js';
import { RedisTransport } from '../src/index.js';
import { broker, captureLogger, until } from './support/redis.js';

const b = broker('redis');

/** Waits until `logger` holds at least `n` lines (ioredis retries after 50 ms, 100 ms, …), or fails after the deadline. */
function lines(logger: ReturnType<typeof captureLogger>, n: number): Promise<void> {
  return until(() => logger.lines.length >= n, 20_000, `${n} log lines`);
}

describe('redis connection errors', () => {
  it('an unreachable broker: every failed connect is logged through the logger (first warn, repeats debug), never with the credentials', async () => {
    const logger = captureLogger();
    const t = new RedisTransport({ url: 'redis://user:s3cret-pw@127.0.0.1:1', logger });
    try {
      assert.equal(t.client.listenerCount('error'), 1, 'ioredis prints "Unhandled error event" without a listener');
      await lines(logger, 2);
      const [first, second] = logger.lines;
      assert.equal(first!.level, 'warn');
      assert.match(String(first!.fields.error), /ECONNREFUSED/);
      assert.equal(second!.level, 'debug', 'the same error again is not repeated at warn');
      assert.ok(!JSON.stringify(logger.lines).includes('s3cret'), 'no credentials logged');
    } finally {
      await t.close(); // nothing queued: QUIT on a broken connection disconnects at once
    }
  });

  it('cuts the client\'s own credentials out of an error text (injected: Redis never echoes them)', async () => {
    const logger = captureLogger();
    const t = new RedisTransport({ url: 'redis://app-user:s3cret-pw@127.0.0.1:1', logger });
    try {
      t.client.emit('error', new Error('AUTH failed for app-user with s3cret-pw'));
      assert.deepEqual(logger.lines.at(-1)!.fields, { error: 'AUTH failed for *** with ***' });
    } finally {
      await t.close();
    }
  });

  it('the blocking duplicate gets a listener too; a client passed as redis is left as it was', { skip: b.skip }, async () => {
    const logger = captureLogger();
    const mine = new Redis(b.url!, { lazyConnect: true });
    const t = new RedisTransport({ redis: mine, logger });
    const copy = duplicate(mine, logger);
    try {
      assert.equal(mine.listenerCount('error'), 0, 'the caller decides about their own client');
      assert.equal(copy.listenerCount('error'), 1);
    } finally {
      copy.disconnect();
      await t.close();
      mine.disconnect();
    }
  });
});
