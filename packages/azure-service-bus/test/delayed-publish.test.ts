// A delayed publish rides `scheduledEnqueueTimeUtc`: the message is on the queue
// at once but not deliverable before it is due. Checked without racing a clock:
// a one-hour delay is not received within a receive deadline (and peek shows it
// scheduled), and a short one is received within a poll deadline, never earlier
// than its delay.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, type Message } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { asb, captureLogger, configureQueue, Raw, uniqueQueue } from './support/lab.js';

const URN = 'urn:babel:orders:later';
const HOUR = 3_600_000;
const SHORT = 300;

describe('Azure Service Bus delayed publish', { skip: asb.skip }, () => {
  const url = asb.url!;
  let raw: Raw;
  before(() => {
    raw = new Raw(url);
  });
  after(async () => {
    await raw.close();
  });

  it('is scheduled, not deliverable before it is due, then delivered', async () => {
    const queue = uniqueQueue('bq-asb-delay');
    await configureQueue(url, queue);
    const logger = captureLogger();
    const app = createApp({ transport: new AzureServiceBusTransport({ connectionString: url, logger }), queue, logger });
    const handled: { message: Message; at: number }[] = [];
    app.handle(URN, (_data, message) => void handled.push({ message, at: Date.now() }));
    const receiver = raw.client.createReceiver(queue, { skipParsingBodyAsJson: true });
    try {
      const beforeLong = Date.now();
      const longId = await app.publish(URN, { n: 'long' }, { delayMs: HOUR });
      const afterLong = Date.now();
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 1500 }), 0, 'nothing is deliverable while the message is scheduled');

      const [scheduled, ...others] = await receiver.peekMessages(10);
      assert.equal(others.length, 0, 'one message on the queue');
      assert.equal(scheduled!.messageId, longId);
      assert.equal(scheduled!.state, 'scheduled');
      const due = scheduled!.scheduledEnqueueTimeUtc!.getTime();
      assert.ok(due >= beforeLong + HOUR && due <= afterLong + HOUR, `scheduledEnqueueTimeUtc is publish time + delay (${due - beforeLong} ms ahead)`);

      const beforeShort = Date.now();
      const shortId = await app.publish(URN, { n: 'short' }, { delayMs: SHORT });
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 10_000 }), 1, 'the short delay came due within the poll deadline');
      assert.equal(handled.length, 1);
      assert.equal(handled[0]!.message.id, shortId, 'the due message, not the one scheduled for later');
      assert.ok(handled[0]!.at - beforeShort >= SHORT, `not delivered before its delay (${handled[0]!.at - beforeShort} ms)`);

      const [still] = await receiver.peekMessages(10, { fromSequenceNumber: scheduled!.sequenceNumber! });
      assert.equal(still?.messageId, longId, 'the long delay is still scheduled');
      const sender = raw.client.createSender(queue);
      await sender.cancelScheduledMessages(scheduled!.sequenceNumber!);
      await sender.close();
    } finally {
      await receiver.close();
      await app.close();
    }
  });
});
