// publishMany packs messages with createMessageBatch, against the lab's Service
// Bus stand-in (a protocol-level stand-in the official client talks to).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, PublishManyError } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import { outgoingBatch, retarget } from '../../../test/support/outgoing.js';
import { asb, bytesOf, captureLogger, configureQueue, Raw, uniqueQueue } from './support/lab.js';

const URN = 'urn:babel:orders:created';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const wire = (m: ServiceBusReceivedMessage) => ({
  body: bytesOf(m),
  messageId: m.messageId,
  subject: m.subject,
  correlationId: m.correlationId,
  contentType: m.contentType,
  applicationProperties: m.applicationProperties,
});

/** Receives until `count` messages came or 30 s passed (a busy stand-in can answer a receive empty). */
async function drainAll(raw: Raw, queue: string, count: number): Promise<ServiceBusReceivedMessage[]> {
  const out: ServiceBusReceivedMessage[] = [];
  const deadline = Date.now() + 30_000;
  while (out.length < count && Date.now() < deadline) out.push(...(await raw.drain(queue, { max: count - out.length })));
  return out;
}

describe('Azure Service Bus publishMany (createMessageBatch)', { skip: asb.skip }, () => {
  const url = asb.url!;
  let raw: Raw;
  before(() => {
    raw = new Raw(url);
  });
  after(async () => {
    await raw.close();
  });

  it('sends every message exactly as a single publish does: body, properties, riders', async () => {
    const single = uniqueQueue('bq-asb-pm-single');
    const batched = uniqueQueue('bq-asb-pm-batch');
    await configureQueue(url, single);
    await configureQueue(url, batched);
    const transport = new AzureServiceBusTransport({ connectionString: url, logger: captureLogger() });
    const messages = outgoingBatch(single, 12, { headers: { traceparent: TRACEPARENT } });
    try {
      for (const m of messages) await transport.publish(m);
      const outcomes = await transport.publishMany(retarget(messages, batched));
      assert.deepEqual(outcomes, messages.map((m) => ({ ok: true, messageId: m.projection.messageId })));
    } finally {
      await transport.close();
    }
    const byId = (xs: ServiceBusReceivedMessage[]) => xs.map(wire).sort((x, y) => String(x.messageId).localeCompare(String(y.messageId)));
    const a = byId(await drainAll(raw, single, 12));
    const c = byId(await drainAll(raw, batched, 12));
    assert.equal(c.length, 12);
    assert.deepEqual(c, a);
  });

  it('splits into as many batches as the size limit needs; a message too large for any batch is refused alone', async () => {
    const queue = uniqueQueue('bq-asb-pm-split');
    await configureQueue(url, queue);
    const transport = new AzureServiceBusTransport({ connectionString: url, logger: captureLogger() });
    const pad = (m: ReturnType<typeof outgoingBatch>[number], bytes: number) => ({ ...m, body: Buffer.concat([m.body, Buffer.alloc(bytes, 0x20)]) });
    // ~100 KiB each: six of them cannot share one batch of the stand-in's 256 KiB, so they need three.
    const messages = outgoingBatch(queue, 7).map((m) => pad(m, 100 * 1024));
    messages[3] = pad(messages[3]!, 4 * 1024 * 1024);
    let outcomes;
    try {
      outcomes = await transport.publishMany(messages);
    } finally {
      await transport.close();
    }
    assert.deepEqual(outcomes.map((o) => o.ok), [true, true, true, false, true, true, true], outcomes.map((o) => (o.ok ? 'ok' : o.error.message)).join(' / '));
    assert.match(String(!outcomes[3]!.ok && outcomes[3]!.error.message), /does not fit a batch/);
    const got = (await drainAll(raw, queue, 6)).map((m) => m.messageId).sort();
    assert.deepEqual(got, [0, 1, 2, 4, 5, 6].map((i) => messages[i]!.projection.messageId).sort());
  });

  it('through the App: every item handled; a closed transport rejects with a PublishManyError naming every item', async () => {
    const queue = uniqueQueue('bq-asb-pm-app');
    await configureQueue(url, queue);
    const logger = captureLogger();
    const app = createApp({ transport: new AzureServiceBusTransport({ connectionString: url, logger }), queue, logger });
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
