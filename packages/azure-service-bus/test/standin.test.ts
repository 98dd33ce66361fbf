// The Service Bus stand-in itself (test/support/asb-standin), started in this
// process on a free port, so that what is checked is the stand-in in this tree
// and not whichever instance `scripts/brokers up asb` left running.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServiceBusClient } from '@azure/service-bus';
import { startStandIn, type StandIn } from '../../../test/support/asb-standin/server.js';

describe('the Service Bus stand-in', () => {
  let standIn: StandIn;
  let client: ServiceBusClient;
  before(async () => {
    standIn = await startStandIn({ port: 0, log: () => undefined });
    client = new ServiceBusClient(`Endpoint=sb://127.0.0.1:${standIn.port};SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true`);
  });
  after(async () => {
    await client.close();
    await standIn.close();
  });

  it('keeps delivering on one PeekLock link past 2048 deliveries (rhea frees what it settled)', async () => {
    const COUNT = 2_100;
    const queue = 'long-link';
    const sender = client.createSender(queue);
    for (let i = 0; i < COUNT; i += 100) {
      await sender.sendMessages(Array.from({ length: Math.min(100, COUNT - i) }, (_, j) => ({ body: Buffer.from(String(i + j)) })));
    }
    await sender.close();
    const receiver = client.createReceiver(queue, { skipParsingBodyAsJson: true });
    let received = 0;
    try {
      const deadline = Date.now() + 60_000;
      while (received < COUNT && Date.now() < deadline) {
        const batch = await receiver.receiveMessages(100, { maxWaitTimeInMs: 2_000 });
        await Promise.all(batch.map((m) => receiver.completeMessage(m)));
        received += batch.length;
      }
    } finally {
      await receiver.close();
    }
    assert.equal(received, COUNT, 'every message reached the one receiver link');
    assert.deepEqual(standIn.namespace.queue(queue).counts(Date.now()), { active: 0, locked: 0, scheduled: 0, deferred: 0 });
  });
});
