// A delayed retry on an entity with RequiresDuplicateDetection. The copy the binding
// schedules is a second send of the same envelope: with the envelope's meta.id as its
// MessageId, Service Bus would accept it and drop it inside the history window, and the
// message would be gone. Run on a stand-in started in this process (it models duplicate
// detection; the shared lab instance may be an older build).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, type Message } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { startStandIn, type StandIn } from '../../../test/support/asb-standin/server.js';
import { bytesOf, captureLogger, envelope, Raw, uniqueQueue } from './support/lab.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 15_000;

describe('Azure Service Bus: a delayed retry on an entity with duplicate detection', () => {
  let standIn: StandIn;
  let url: string;
  let raw: Raw;
  before(async () => {
    standIn = await startStandIn({ port: 0, log: () => undefined });
    url = `Endpoint=sb://127.0.0.1:${standIn.port};SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true`;
    raw = new Raw(url);
  });
  after(async () => {
    await raw.close();
    await standIn.close();
  });

  it('is delivered again: the copy has its own MessageId, the body keeps meta.id and the rest of the projection', async () => {
    const queue = uniqueQueue('bq-asb-dedup');
    const config = standIn.namespace.queue(queue).config;
    config.requiresDuplicateDetection = true;
    const logger = captureLogger();
    const transport = new AzureServiceBusTransport({ connectionString: url, logger });
    const app = createApp({ transport, queue, logger, maxAttempts: 3, retryBackoff: { baseMs: 200 } });
    const seen: Message[] = [];
    app.handle(URN, (_data, message) => {
      seen.push(message);
      if (seen.length === 1) throw new Error('boom');
    });
    const { body, projection } = envelope(URN, { order_id: 7 }, queue);
    try {
      await transport.publish({ body, queue, projection, headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
      assert.equal(await app.consume({ maxMessages: 2, idleMs: IDLE_MS }), 2, 'the failed delivery and its retry');
    } finally {
      await app.close();
    }
    assert.deepEqual(seen.map((m) => m.attempts), [1, 2]);
    assert.equal(seen[1]!.id, projection.messageId, 'the retry is the same envelope (meta.id in the body)');
    assert.equal(seen[1]!.headers.traceparent, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    assert.deepEqual(await raw.drain(queue, { waitMs: 300 }), [], 'nothing left behind');
  });

  it("the copy's MessageId is derived from meta.id and the replaced delivery, so the SDK re-sending the same copy is still dropped", async () => {
    const queue = uniqueQueue('bq-asb-dedup-copy');
    standIn.namespace.queue(queue).config.requiresDuplicateDetection = true;
    const logger = captureLogger();
    const transport = new AzureServiceBusTransport({ connectionString: url, logger });
    const app = createApp({ transport, queue, logger, maxAttempts: 3, retryBackoff: { baseMs: 600_000 } });
    app.handle(URN, () => {
      throw new Error('boom');
    });
    const { body, projection } = envelope(URN, { order_id: 8 }, queue);
    try {
      await transport.publish({ body, queue, projection });
      assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await app.close();
    }
    const receiver = raw.client.createReceiver(queue, { skipParsingBodyAsJson: true });
    try {
      const [copy, ...rest] = await receiver.peekMessages(10);
      assert.equal(rest.length, 0, 'only the scheduled copy is left (the original was completed)');
      assert.equal(copy!.state, 'scheduled');
      const parsed = JSON.parse(bytesOf(copy!).toString('utf8'));
      assert.equal(parsed.meta.id, projection.messageId, 'meta.id in the body is unchanged');
      assert.equal(parsed.attempts, 1);
      assert.equal(copy!.subject, URN);
      assert.equal(copy!.correlationId, projection.traceId);
      assert.notEqual(copy!.messageId, projection.messageId, 'a MessageId of its own: meta.id is logged already');
      assert.ok(String(copy!.messageId).startsWith(`${projection.messageId}:retry:`), `derived from meta.id: ${String(copy!.messageId)}`);
      // The SDK retrying an in-doubt send of the same copy: dropped, as duplicate detection is meant to.
      await raw.send(queue, { body: bytesOf(copy!), messageId: copy!.messageId!, scheduledEnqueueTimeUtc: new Date(Date.now() + 600_000) });
      assert.equal((await receiver.peekMessages(10, { fromSequenceNumber: copy!.sequenceNumber! })).length, 1, 'the re-sent copy was dropped');
    } finally {
      await receiver.close();
    }
  });
});
