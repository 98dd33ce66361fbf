// The Service Bus stand-in itself (test/support/asb-standin), started in this
// process on a free port, so that what is checked is the stand-in in this tree
// and not whichever instance `scripts/brokers up asb` left running.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServiceBusClient, type ServiceBusReceivedMessage } from '@azure/service-bus';
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

  // The reliability suite's fuzz part never finished on the stand-in: a receiver asking for one
  // message got every waiting message locked and queued in rhea's buffer (rhea takes credit only
  // when it transfers), their locks lapsed there, and each was later sent with a dead lock token,
  // handled, and its completion refused, while the message went out again: poison bodies came
  // back dozens of times after being dead-lettered.
  it('locks only as many messages as the receiver gave credit for', async () => {
    const queue = 'credit-locks';
    const sender = client.createSender(queue);
    await sender.sendMessages(Array.from({ length: 20 }, (_, i) => ({ body: Buffer.from(String(i)) })));
    await sender.close();
    const receiver = client.createReceiver(queue, { skipParsingBodyAsJson: true });
    try {
      const first = await receiver.receiveMessages(1, { maxWaitTimeInMs: 10_000 });
      assert.equal(first.length, 1, 'one message for a credit of one');
      assert.deepEqual(standIn.namespace.queue(queue).counts(Date.now()), { active: 19, locked: 1, scheduled: 0, deferred: 0 }, 'the other 19 wait unlocked');
      const rest = await receiver.receiveMessages(5, { maxWaitTimeInMs: 10_000 });
      assert.ok(rest.length >= 1 && rest.length <= 5, `at most the 5 asked for (got ${rest.length})`);
      assert.deepEqual(standIn.namespace.queue(queue).counts(Date.now()), { active: 19 - rest.length, locked: 1 + rest.length, scheduled: 0, deferred: 0 }, 'locked: what was delivered');
    } finally {
      await receiver.close();
    }
  });

  it('starts a lock at delivery: a message that waited longer than the lock duration completes', async () => {
    const queue = 'lock-at-delivery';
    standIn.namespace.queue(queue).config.lockDurationMs = 1_000;
    const sender = client.createSender(queue);
    await sender.sendMessages(Array.from({ length: 3 }, (_, i) => ({ body: Buffer.from(String(i)) })));
    await sender.close();
    const receiver = client.createReceiver(queue, { skipParsingBodyAsJson: true, maxAutoLockRenewalDurationInMs: 0 });
    try {
      const [first] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 10_000 });
      assert.ok(first !== undefined, 'the first message is delivered');
      await receiver.completeMessage(first);
      // The other two wait in the queue, unlocked, for longer than a lock lasts; from here on a
      // lock lasts long enough for any machine, so what is checked is only when their locks began.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      standIn.namespace.queue(queue).config.lockDurationMs = 60_000;
      const later: ServiceBusReceivedMessage[] = [];
      const deadline = Date.now() + 20_000;
      while (later.length < 2 && Date.now() < deadline) later.push(...(await receiver.receiveMessages(2 - later.length, { maxWaitTimeInMs: 2_000 })));
      assert.equal(later.length, 2, 'both waiting messages are delivered');
      for (const message of later) {
        assert.equal(message.deliveryCount, 0, 'never delivered before: no lock of theirs lapsed');
        await receiver.completeMessage(message);
      }
    } finally {
      await receiver.close();
    }
    assert.deepEqual(standIn.namespace.queue(queue).counts(Date.now()), { active: 0, locked: 0, scheduled: 0, deferred: 0 }, 'all three completed');
  });

  describe('duplicate detection (RequiresDuplicateDetection)', () => {
    async function send(queue: string, messages: Parameters<ReturnType<ServiceBusClient['createSender']>['sendMessages']>[0]) {
      const sender = client.createSender(queue);
      try {
        await sender.sendMessages(messages);
      } finally {
        await sender.close();
      }
    }
    const counts = (queue: string) => standIn.namespace.queue(queue).counts(Date.now());

    it('drops a second message with a logged MessageId inside the window, scheduled or not; the send still succeeds', async () => {
      const queue = 'dedup-window';
      standIn.namespace.queue(queue).config.requiresDuplicateDetection = true;
      await send(queue, { body: Buffer.from('a'), messageId: 'm-1' });
      await send(queue, { body: Buffer.from('b'), messageId: 'm-1' });
      assert.deepEqual(counts(queue), { active: 1, locked: 0, scheduled: 0, deferred: 0 }, 'the second m-1 is dropped');
      await send(queue, { body: Buffer.from('c'), messageId: 'm-1', scheduledEnqueueTimeUtc: new Date(Date.now() + 600_000) });
      assert.deepEqual(counts(queue), { active: 1, locked: 0, scheduled: 0, deferred: 0 }, 'a scheduled duplicate is dropped too');
      await send(queue, { body: Buffer.from('d'), messageId: 'm-2', scheduledEnqueueTimeUtc: new Date(Date.now() + 600_000) });
      await send(queue, { body: Buffer.from('e'), messageId: 'm-2' });
      assert.deepEqual(counts(queue), { active: 1, locked: 0, scheduled: 1, deferred: 0 }, 'a duplicate of a scheduled message is dropped');
      await send(queue, [{ body: Buffer.from('f'), messageId: 'm-3' }, { body: Buffer.from('g'), messageId: 'm-3' }]);
      assert.deepEqual(counts(queue), { active: 2, locked: 0, scheduled: 1, deferred: 0 }, 'within a batch as well');
      const other = 'dedup-off';
      await send(other, { body: Buffer.from('a'), messageId: 'm-1' });
      await send(other, { body: Buffer.from('b'), messageId: 'm-1' });
      assert.deepEqual(counts(other), { active: 2, locked: 0, scheduled: 0, deferred: 0 }, 'an entity without duplicate detection keeps both');
    });

    it('accepts the MessageId again once the history window has passed', async () => {
      const queue = 'dedup-expiry';
      const config = standIn.namespace.queue(queue).config;
      config.requiresDuplicateDetection = true;
      config.duplicateDetectionWindowMs = 500;
      await send(queue, { body: Buffer.from('a'), messageId: 'm-1' });
      // Waiting longer than the window can only make the second send later than it.
      await new Promise((resolve) => setTimeout(resolve, 800));
      await send(queue, { body: Buffer.from('b'), messageId: 'm-1' });
      assert.deepEqual(counts(queue), { active: 2, locked: 0, scheduled: 0, deferred: 0 });
    });
  });

  describe('sessions (RequiresSession)', () => {
    const bodies = (messages: ServiceBusReceivedMessage[]) => messages.map((m) => Buffer.from(m.body as Buffer).toString());

    it('a session receiver accepts the next session, gets its messages in order, renews its lock, and frees it on close', async () => {
      const queue = 'sessions-basic';
      standIn.namespace.queue(queue).config.requiresSession = true;
      const sender = client.createSender(queue);
      try {
        await sender.sendMessages([
          { body: Buffer.from('a1'), sessionId: 'a' },
          { body: Buffer.from('b1'), sessionId: 'b' },
          { body: Buffer.from('a2'), sessionId: 'a' },
          { body: Buffer.from('b2'), sessionId: 'b' },
          { body: Buffer.from('a3'), sessionId: 'a' },
        ]);
        await assert.rejects(sender.sendMessages({ body: Buffer.from('none') }), 'a message without a SessionId is refused');
      } finally {
        await sender.close();
      }
      await assert.rejects(client.createReceiver(queue).receiveMessages(1, { maxWaitTimeInMs: 2_000 }), 'a non-session receiver is refused');
      const first = await client.acceptNextSession(queue, { skipParsingBodyAsJson: true });
      const second = await client.acceptNextSession(queue, { skipParsingBodyAsJson: true });
      try {
        assert.equal(first.sessionId, 'a', 'the session of the oldest message');
        assert.equal(second.sessionId, 'b', 'the next one nobody holds');
        assert.ok(first.sessionLockedUntilUtc.getTime() > Date.now(), 'the lock expiry arrives with the attach');
        const a = await first.receiveMessages(1, { maxWaitTimeInMs: 5_000 });
        assert.deepEqual(bodies(a), ['a1']);
        await first.abandonMessage(a[0]!);
        const again = await first.receiveMessages(1, { maxWaitTimeInMs: 5_000 });
        assert.deepEqual(bodies(again), ['a1'], 'an abandoned message comes back first: the session keeps its order');
        assert.equal(again[0]!.deliveryCount, 1);
        await first.completeMessage(again[0]!);
        const before = first.sessionLockedUntilUtc.getTime();
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.ok((await first.renewSessionLock()).getTime() > before, 'the session lock is renewed');
        const rest: ServiceBusReceivedMessage[] = [];
        const deadline = Date.now() + 10_000;
        while (rest.length < 2 && Date.now() < deadline) rest.push(...(await first.receiveMessages(2 - rest.length, { maxWaitTimeInMs: 1_000 })));
        assert.deepEqual(bodies(rest), ['a2', 'a3']);
        for (const m of rest) await first.completeMessage(m);
        const b = await second.receiveMessages(1, { maxWaitTimeInMs: 5_000 });
        assert.deepEqual(bodies(b), ['b1'], 'the other session, beside it');
      } finally {
        await first.close();
        await second.close();
      }
      const reopened = await client.acceptNextSession(queue, { skipParsingBodyAsJson: true });
      try {
        assert.equal(reopened.sessionId, 'b', 'a closed receiver frees its session');
        const b = await reopened.receiveMessages(2, { maxWaitTimeInMs: 5_000 });
        assert.deepEqual(bodies(b), ['b1', 'b2'], 'b1, locked when its receiver closed, is handed back first');
        assert.equal(b[0]!.deliveryCount, 1, 'counted as a failed delivery');
      } finally {
        await reopened.close();
      }
    });

    it('accept-next-session waits for a session, and fails with a time-out when none comes', async () => {
      const queue = 'sessions-wait';
      standIn.namespace.queue(queue).config.requiresSession = true;
      const quick = new ServiceBusClient(`Endpoint=sb://127.0.0.1:${standIn.port};SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true`, { retryOptions: { timeoutInMs: 1_500 } });
      try {
        await assert.rejects(quick.acceptNextSession(queue), (error: any) => ['ServiceTimeout', 'SessionCannotBeLocked'].includes(error.code), 'no session: a time-out');
        const accepting = client.acceptNextSession(queue, { skipParsingBodyAsJson: true });
        await new Promise((resolve) => setTimeout(resolve, 200));
        const sender = client.createSender(queue);
        await sender.sendMessages({ body: Buffer.from('late'), sessionId: 'late' });
        await sender.close();
        const receiver = await accepting;
        try {
          assert.equal(receiver.sessionId, 'late', 'the held attach is answered once a session is there');
        } finally {
          await receiver.close();
        }
      } finally {
        await quick.close();
      }
    });
  });
});
