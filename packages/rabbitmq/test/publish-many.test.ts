import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp, PublishManyError, silentLogger } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { outgoingBatch, retarget } from '../../../test/support/outgoing.js';
import { publishFixture } from './support/publish-fixture.js';
import { rabbit } from './support/rabbit.js';

const URN = 'urn:babel:orders:created';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('RabbitMQ publishMany (confirm window)', { skip: rabbit.skip }, () => {
  const fixture = publishFixture();
  const { url, queue } = fixture;

  it('puts every message on the wire exactly as a single publish does: bytes, properties, headers, order', async () => {
    const single = queue('bq-rmq-pm-single');
    const batched = queue('bq-rmq-pm-batch');
    const messages = outgoingBatch(single, 50, { headers: { traceparent: TRACEPARENT } });
    for (const m of messages) await fixture.transport.publish(m);
    const outcomes = await fixture.transport.publishMany(retarget(messages, batched));
    assert.deepEqual(outcomes, messages.map((m) => ({ ok: true, messageId: m.projection.messageId })));
    const a = await fixture.raw.drain(single);
    const c = await fixture.raw.drain(batched);
    assert.equal(c.length, 50);
    c.forEach((got, i) => {
      assert.ok(got.content.equals(a[i]!.content), `message ${i} byte-identical`);
      assert.deepEqual(got.properties, a[i]!.properties, `message ${i} same properties`);
    });
  });

  it('delayed items go through the holding queue as a single publish sends them', async () => {
    const q = queue('bq-rmq-pm-delay');
    fixture.alsoDelete(`${q}.delay.600000`);
    const outcomes = await fixture.transport.publishMany([...outgoingBatch(q, 2, { delayMs: 600_000 }), ...outgoingBatch(q, 1)]);
    assert.ok(outcomes.every((o) => o.ok), 'all confirmed');
    await fixture.raw.waitForCount(`${q}.delay.600000`, 2);
    assert.equal(await fixture.raw.count(q), 1, 'the undelayed one is ready now');
  });

  it('a partial failure is reported per message: the broker nacks what overflows the queue, the rest is confirmed', async () => {
    const q = queue('bq-rmq-pm-overflow');
    await fixture.raw.channel.assertQueue(q, { durable: true, arguments: { 'x-max-length': 3, 'x-overflow': 'reject-publish' } });
    const outcomes = await fixture.transport.publishMany(outgoingBatch(q, 5));
    assert.deepEqual(outcomes.map((o) => o.ok), [true, true, true, false, false]);
    assert.match(String(!outcomes[4]!.ok && outcomes[4]!.error.message), /basic\.nack/);
    assert.equal(await fixture.raw.count(q), 3);
  });

  it('through the App: every item is handled; the nacked ones reject with a PublishManyError naming them', async () => {
    const q = queue('bq-rmq-pm-app');
    const app = createApp({ transport: new RabbitMqTransport({ url, logger: silentLogger }), queue: q, logger: silentLogger });
    try {
      const seen: number[] = [];
      app.handle<{ n: number }>(URN, (data) => void seen.push(data.n));
      const ids = await app.publishMany(URN, Array.from({ length: 20 }, (_, n) => ({ n })));
      assert.equal(ids.length, 20);
      assert.equal(await app.consume({ maxMessages: 20, idleMs: 30_000 }), 20);
      assert.deepEqual(seen.sort((x, y) => x - y), Array.from({ length: 20 }, (_, n) => n));
      const full = queue('bq-rmq-pm-app-full');
      await fixture.raw.channel.assertQueue(full, { durable: true, arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' } });
      const error = await app.publishMany(URN, [{ n: 0 }, { n: 1 }, { n: 2 }], { queue: full }).catch((e: unknown) => e);
      assert.ok(error instanceof PublishManyError, 'a PublishManyError');
      assert.deepEqual(error.failed, [1, 2]);
      const [kept] = await fixture.raw.drain(full);
      assert.equal(JSON.parse(kept!.content.toString()).meta.id, error.results[0]!.id);
    } finally {
      await app.close();
    }
  });
});
