import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { jsonLines, run } from './support/capture.js';

const b = broker('redis');

describe('babelqueue redis legacy-cleanup: usage', () => {
  test('without --consumers-stopped it is a usage error saying why, and nothing is touched', async () => {
    const r = await run(['redis', 'legacy-cleanup', '--url', 'redis://user:secret@127.0.0.1:1', '--queue', 'orders']);
    assert.equal(r.code, 2);
    assert.match(r.err, /^babelqueue: legacy-cleanup hands every \+inf reservation of "orders" back to the ready list; a consumer still running would see its messages delivered twice\. Stop every consumer of the queue, then confirm with --consumers-stopped\nUsage: babelqueue redis legacy-cleanup/);
    assert.equal(r.out, '');
  });

  for (const [argv, message] of [
    [['redis', 'legacy-cleanup', '--consumers-stopped', '--url', 'redis://127.0.0.1:1'], /needs --queue Q/],
    [['redis', 'legacy-cleanup', '--queue', 'q', '--consumers-stopped', '--url', 'memory://'], /needs a Redis broker/],
    [['redis', 'legacy-cleanup', '--queue', 'q', '--consumers-stopped', 'extra'], /unexpected argument "extra"/],
    [['redis'], /redis needs a subcommand: legacy-cleanup/],
    [['redis', 'cleanup'], /unknown redis subcommand "cleanup"/],
  ] as const) {
    test(`${argv.join(' ')} → exit 2`, async () => {
      const r = await run([...argv]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, message);
    });
  }

  test('--help prints the usage', async () => {
    const r = await run(['redis', 'legacy-cleanup', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /^Usage: babelqueue redis legacy-cleanup --queue Q --consumers-stopped/);
  });
});

describe('babelqueue redis legacy-cleanup on redis', { skip: b.skip }, () => {
  test('a message abandoned by a retryAfter null consumer (+inf member) is back on the ready list', async () => {
    const queue = uniqueQueue('cli-cleanup');
    const redis = new Redis(b.url!);
    try {
      const published = await run(['publish', '--url', b.url!, '--queue', queue, 'urn:babel:orders:created', '{"order_id":7}']);
      assert.equal(published.code, 0, published.err);
      const id = published.out.trim();
      // --no-ack takes it and leaves it unsettled; with retryAfter null its deadline member is +inf.
      const abandoned = await run(['consume', '--url', `${b.url!}?retryAfter=null`, '--queue', queue, '--max', '1', '--idle-ms', '30000', '--no-ack', '--json']);
      assert.equal(abandoned.code, 0, abandoned.err);
      assert.equal(await redis.llen(queue), 0);
      assert.equal(await redis.llen(`${queue}:processing`), 1);
      assert.deepEqual(await redis.zrangebyscore(`${queue}:processing:deadlines`, '+inf', '+inf').then((m) => m.length), 1);

      const cleaned = await run(['redis', 'legacy-cleanup', '--url', b.url!, '--queue', queue, '--consumers-stopped', '--json']);
      assert.equal(cleaned.code, 0, cleaned.err);
      assert.deepEqual(jsonLines(cleaned.out), [{ queue, handled: 1 }]);
      assert.equal(await redis.llen(queue), 1);
      assert.equal(await redis.exists(`${queue}:processing`, `${queue}:processing:deadlines`), 0);

      const again = await run(['redis', 'legacy-cleanup', '--url', b.url!, '--queue', queue, '--consumers-stopped']);
      assert.equal(again.code, 0, again.err);
      assert.equal(again.out, `0 +inf reservations of ${queue} handled (each value still on ${queue}:processing is back on ${queue})\n`);

      const consumed = await run(['consume', '--url', b.url!, '--queue', queue, '--max', '1', '--idle-ms', '30000', '--json']);
      assert.equal(consumed.code, 0, consumed.err);
      assert.equal(jsonLines(consumed.out)[0]!.meta.id, id);
    } finally {
      await redis.quit();
    }
  });

  test('a zset-layout URL is refused: the cleanup is for the legacy layout', async () => {
    const r = await run(['redis', 'legacy-cleanup', '--url', `${b.url!}?layout=zset`, '--queue', uniqueQueue('cli-z'), '--consumers-stopped']);
    assert.equal(r.code, 2);
    assert.match(r.err, /legacy-cleanup is for the legacy layout; redis:\/\/127\.0\.0\.1:6379\/?\?layout=zset is the zset layout/);
  });
});
