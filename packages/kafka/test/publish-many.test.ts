import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp, PublishManyError, silentLogger } from '@babelqueue/core';
import { outgoingBatch, retarget } from '../../../test/support/outgoing.js';
import { Lab, kafka } from './support/kafka-lab.js';

const URN = 'urn:babel:orders:created';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('Kafka publishMany (one produce call)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('writes every record exactly as a single publish does: value, key, headers, timestamp, order', async () => {
    const single = await lab.topic('pm-single');
    const batched = await lab.topic('pm-batch');
    const transport = lab.transport();
    const messages = outgoingBatch(single, 30, { headers: { traceparent: TRACEPARENT }, key: Buffer.from('order-7') });
    for (const m of messages) await transport.publish(m);
    const outcomes = await transport.publishMany(retarget(messages, batched));
    assert.deepEqual(outcomes, messages.map((m) => ({ ok: true, messageId: m.projection.messageId })));
    const a = await lab.read(single, 30);
    const c = await lab.read(batched, 30);
    assert.equal(c.length, 30);
    c.forEach((got, i) => {
      assert.deepEqual(got.value, a[i]!.value, `record ${i} value byte-identical`);
      assert.deepEqual(got.key, a[i]!.key, `record ${i} key`);
      assert.deepEqual(got.headers, a[i]!.headers, `record ${i} headers`);
      assert.equal(got.timestamp, a[i]!.timestamp, `record ${i} timestamp (meta.created_at)`);
    });
  });

  it('a delay no tier covers is refused for that message alone; the others are written', async () => {
    const topic = await lab.topic('pm-delay');
    const transport = lab.transport();
    const [now, later] = outgoingBatch(topic, 2);
    const outcomes = await transport.publishMany([{ ...later!, delayMs: 5_000 }, now!]);
    assert.deepEqual(outcomes.map((o) => o.ok), [false, true]);
    const [record] = await lab.read(topic, 1);
    assert.deepEqual(record!.value, now!.body);
  });

  it('a batch the broker refuses (one record over max.message.bytes) fails every item it carried, and nothing of it is on the topic', async () => {
    const topic = await lab.topic('pm-oversized');
    const transport = lab.transport();
    const messages = outgoingBatch(topic, 3);
    const huge = { ...messages[1]!, body: Buffer.concat([messages[1]!.body, Buffer.alloc(2 * 1024 * 1024, 0x20)]) };
    const outcomes = await transport.publishMany([messages[0]!, huge, messages[2]!]);
    assert.deepEqual(outcomes.map((o) => o.ok), [false, false, false]);
    assert.match(String(!outcomes[1]!.ok && outcomes[1]!.error.message), /larger than the max message size|too large/i);
    assert.equal(await lab.size(topic), 0);
  });
  it('in a refused batch, a message refused before the call keeps its own reason; the others carry the broker\'s', async () => {
    const topic = await lab.topic('pm-mixed');
    const transport = lab.transport();
    const messages = outgoingBatch(topic, 3);
    const huge = { ...messages[1]!, body: Buffer.concat([messages[1]!.body, Buffer.alloc(2 * 1024 * 1024, 0x20)]) };
    const outcomes = await transport.publishMany([{ ...messages[0]!, delayMs: 5_000 }, huge, messages[2]!]);
    assert.deepEqual(outcomes.map((o) => o.ok), [false, false, false]);
    assert.deepEqual(outcomes.map((o) => o.messageId), messages.map((m) => m.projection.messageId));
    const reasons = outcomes.map((o) => (o.ok ? '' : o.error.message));
    assert.doesNotMatch(reasons[0]!, /larger than the max message size|too large/i);
    assert.match(reasons[1]!, /larger than the max message size|too large/i);
    assert.equal(reasons[2], reasons[1]);
    assert.equal(await lab.size(topic), 0);
  });

  it('through the App: every item is handled; a refused batch rejects with a PublishManyError naming every item', async () => {
    const topic = await lab.topic('pm-app');
    const transport = lab.transport();
    const app = createApp({ transport, queue: topic, logger: silentLogger });
    const seen: number[] = [];
    app.handle<{ n: number }>(URN, (data) => void seen.push(data.n));
    const ids = await app.publishMany(URN, Array.from({ length: 20 }, (_, n) => ({ n })), { key: 'one-partition' });
    assert.equal(ids.length, 20);
    assert.equal(await app.consume({ maxMessages: 20, idleMs: 30_000 }), 20);
    assert.deepEqual(seen, Array.from({ length: 20 }, (_, n) => n));
    const error = await app.publishMany(URN, [{ n: 0 }, { pad: ' '.repeat(2 * 1024 * 1024) }]).catch((e: unknown) => e);
    assert.ok(error instanceof PublishManyError, 'a PublishManyError');
    assert.deepEqual(error.failed, [0, 1]);
  });
});
