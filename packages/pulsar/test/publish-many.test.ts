import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp, PublishManyError, silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { outgoingBatch, retarget } from '../../../test/support/outgoing.js';
import { publishFixture } from './support/publish-fixture.js';
import { lab } from './support/pulsar.js';

const URN = 'urn:babel:orders:created';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('Pulsar publishMany (send all, await receipts)', { skip: lab.skip }, () => {
  const fixture = publishFixture('bq-pulsar-pm');
  const { url, raw, queue } = fixture;

  it('sends every message exactly as a single publish does: payload, properties, riders, order', async () => {
    const single = queue('single');
    const batched = queue('batch');
    const messages = outgoingBatch(single, 20, { headers: { traceparent: TRACEPARENT } });
    for (const m of messages) await fixture.transport.publish(m);
    const outcomes = await fixture.transport.publishMany(retarget(messages, batched));
    assert.deepEqual(outcomes, messages.map((m) => ({ ok: true, messageId: m.projection.messageId })));
    const a = await raw.take(single, 20);
    const c = await raw.take(batched, 20);
    assert.equal(c.length, 20);
    c.forEach((got, i) => {
      assert.ok(got.body.equals(a[i]!.body), `message ${i} byte-identical`);
      assert.deepEqual(got.properties, a[i]!.properties, `message ${i} same properties`);
    });
  });

  it('a partial failure is reported per message: the items for a terminated topic fail, the others are stored', async () => {
    const good = queue('good');
    const closed = queue('terminated');
    await raw.terminate(closed);
    const [g0, g1] = outgoingBatch(good, 2);
    const [t0] = outgoingBatch(closed, 1);
    const outcomes = await fixture.transport.publishMany([g0!, t0!, g1!]);
    assert.deepEqual(outcomes.map((o) => o.ok), [true, false, true], outcomes.map((o) => (o.ok ? 'ok' : o.error.message)).join(' / '));
    assert.match(String(!outcomes[1]!.ok && outcomes[1]!.error.message), /terminated|refused/i);
    const got = await raw.take(good, 2);
    assert.deepEqual(got.map((m) => m.body), [g0!.body, g1!.body]);
  });

  it('through the App: every item handled; a closed transport rejects with a PublishManyError naming every item', async () => {
    const q = queue('app');
    const app = createApp({ transport: new PulsarTransport({ url, logger: silentLogger }), queue: q, logger: silentLogger });
    const seen: number[] = [];
    try {
      app.handle<{ n: number }>(URN, (data) => void seen.push(data.n));
      assert.equal((await app.publishMany(URN, Array.from({ length: 20 }, (_, n) => ({ n })))).length, 20);
      assert.equal(await app.consume({ maxMessages: 20, idleMs: 30_000 }), 20);
      assert.deepEqual(seen.sort((x, y) => x - y), Array.from({ length: 20 }, (_, n) => n));
    } finally {
      await app.close();
    }
    const error = await app.publishMany(URN, [{ n: 0 }, { n: 1 }]).catch((e: unknown) => e);
    assert.ok(error instanceof PublishManyError, 'a PublishManyError');
    assert.deepEqual(error.failed, [0, 1]);
  });
});
