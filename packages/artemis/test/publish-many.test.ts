import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, PublishManyError, silentLogger } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { outgoingBatch, retarget } from '../../../test/support/outgoing.js';
import { artemis, artemisUrl, Raw, uniqueQueue } from './support/artemis.js';

const URN = 'urn:babel:orders:created';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('Artemis publishMany (send all, await each settlement)', { skip: artemis.skip }, () => {
  let raw: Raw;
  const created: string[] = [];
  const queue = (prefix: string) => {
    const name = uniqueQueue(`bq-art-${prefix}`);
    created.push(name);
    return name;
  };
  before(async () => {
    raw = await Raw.open();
  });
  after(async () => {
    await raw.cleanup(...created);
    await raw.close();
  });

  it('sends every message exactly as a single publish does: body, properties, riders, order', async () => {
    const transport = new ArtemisTransport({ url: artemisUrl(), logger: silentLogger });
    const single = queue('pm-single');
    const batched = queue('pm-batch');
    const messages = outgoingBatch(single, 20, { headers: { traceparent: TRACEPARENT } });
    try {
      for (const m of messages) await transport.publish(m);
      const outcomes = await transport.publishMany(retarget(messages, batched));
      assert.deepEqual(outcomes, messages.map((m) => ({ ok: true, messageId: m.projection.messageId })));
    } finally {
      await transport.close();
    }
    await raw.waitForCount(batched, 20);
    const a = await raw.take(single);
    const c = await raw.take(batched);
    assert.equal(c.length, 20);
    const props = (t: (typeof c)[number]) => {
      const { message_id, subject, correlation_id, content_type, durable, application_properties } = t.message;
      return { message_id, subject, correlation_id, content_type, durable, application_properties };
    };
    c.forEach((got, i) => {
      assert.ok(got.body.equals(a[i]!.body), `message ${i} byte-identical`);
      assert.deepEqual(props(got), props(a[i]!), `message ${i} same properties`);
    });
  });

  it('a partial failure is reported per message: the items for a full address fail, the others are accepted', async () => {
    const good = queue('pm-good');
    const full = queue('pm-full');
    await raw.limitAddress(full);
    await raw.send(full, { body: 'x'.repeat(2048) });
    const transport = new ArtemisTransport({ url: artemisUrl(), logger: silentLogger, sendTimeoutMs: 300 });
    try {
      const [g0, g1] = outgoingBatch(good, 2);
      const [f0] = outgoingBatch(full, 1);
      // The full address last: on this broker a send waiting for credit there held up a
      // later send to another address on the same connection until the send timeout.
      const outcomes = await transport.publishMany([g0!, g1!, f0!]);
      assert.deepEqual(outcomes.map((o) => o.ok), [true, true, false], outcomes.map((o) => (o.ok ? 'ok' : o.error.message)).join(' / '));
      assert.match(String(!outcomes[2]!.ok && outcomes[2]!.error.message), /no outcome within 300 ms|resource-limit-exceeded|refused/);
      assert.equal(await raw.count(good), 2);
    } finally {
      await transport.close();
      await raw.unlimitAddress(full);
    }
  });

  it('through the App: every item handled; a closed transport rejects with a PublishManyError naming every item', async () => {
    const q = queue('pm-app');
    const app = createApp({ transport: new ArtemisTransport({ url: artemisUrl(), logger: silentLogger }), queue: q, logger: silentLogger });
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
