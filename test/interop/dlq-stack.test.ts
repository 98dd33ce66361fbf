// The opt-in `dead_letter.stack` (AppOptions.deadLetter.stack) against the
// Python SDK over real Redis (legacy layout): Python must still decode such a
// record and redrive it, and the copy it sends back carries no trace of it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createApp, silentLogger } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import { broker, uniqueQueue } from '../support/brokers.js';
import { until } from '../support/until.js';
import { pythonPeer } from './support/python-peer.js';

const redis = broker('redis');
const peer = pythonPeer('dlq-stack (Python SDK)');
const URN = 'urn:babel:orders:charge';

describe('dead_letter.stack: a Node stack on a DLQ record, read and redriven by the Python SDK', { skip: redis.skip || peer.skip }, () => {
  const queue = uniqueQueue('interop-dlq-stack');
  const dlq = `${queue}.dlq`;
  const raw = new Redis(redis.url!);

  after(async () => {
    await raw.del(queue, dlq, `${queue}:processing`, `${dlq}:processing`);
    await raw.quit();
  });

  it('writes the stack opt-in; Python decodes the record and redrives it; the copy runs again, attempts reset', async () => {
    const transport = new RedisTransport({ url: redis.url!, layout: 'legacy', logger: silentLogger });
    const app = createApp({ transport, queue, maxAttempts: 1, deadLetter: { stack: true }, logger: silentLogger });
    let failing = true;
    const handled: { id: string; attempts: number; data: unknown }[] = [];
    app.handle(URN, async (data, message) => {
      if (failing) throw new TypeError('card declined by gateway');
      handled.push({ id: message.id, attempts: message.attempts, data });
    });
    const stop = new AbortController();
    const running = app.run({ concurrency: 1, signal: stop.signal });
    try {
      const id = await app.publish(URN, { order_id: 7 });
      await until(async () => (await raw.llen(dlq)) === 1, 20_000, 'the dead-letter record');
      const record = (await raw.lindex(dlq, 0))!;
      const parsed = JSON.parse(record);
      assert.deepEqual(Object.keys(parsed.dead_letter), ['reason', 'error', 'exception', 'failed_at', 'original_queue', 'attempts', 'lang', 'stack'], 'the seven members of the spec, then stack');
      assert.match(parsed.dead_letter.stack, /^TypeError: card declined by gateway\n\s+at /);
      assert.equal(parsed.dead_letter.exception, 'TypeError');

      failing = false; // the redriven copy is handled this time
      const answer = await peer.run(['redrive', '--url', redis.url!, '--queue', queue, '--dlq', dlq], Buffer.from(record).toString('base64'));
      assert.equal(answer.decoded.meta.id, id, 'Python decodes the record');
      assert.equal(answer.decoded.dead_letter.stack, parsed.dead_letter.stack, 'and keeps the unknown member as it is');
      assert.equal(answer.dry_run.length, 1);
      assert.equal(answer.dry_run[0].reason, 'failed');
      assert.equal(answer.dry_run[0].to, queue);
      assert.equal(answer.redriven, 1, JSON.stringify(answer.items));

      await until(() => handled.length === 1, 20_000, 'the App to run the redriven message');
      assert.deepEqual(handled, [{ id, attempts: 1, data: { order_id: 7 } }]);
      assert.equal(await raw.llen(dlq), 0);
    } finally {
      stop.abort();
      await running;
      await transport.close();
    }
  });

  it('is off by default: the block has the seven members only', async () => {
    const q = `${queue}-default`;
    const transport = new RedisTransport({ url: redis.url!, layout: 'legacy', logger: silentLogger });
    const app = createApp({ transport, queue: q, maxAttempts: 1, deadLetter: true, logger: silentLogger });
    app.handle(URN, async () => {
      throw new Error('nope');
    });
    const stop = new AbortController();
    const running = app.run({ concurrency: 1, signal: stop.signal });
    try {
      await app.publish(URN, { order_id: 8 });
      await until(async () => (await raw.llen(`${q}.dlq`)) === 1, 20_000, 'the dead-letter record');
      const parsed = JSON.parse((await raw.lindex(`${q}.dlq`, 0))!);
      assert.equal(parsed.dead_letter.stack, undefined);
    } finally {
      stop.abort();
      await running;
      await transport.close();
      await raw.del(q, `${q}.dlq`, `${q}:processing`);
    }
  });
});
