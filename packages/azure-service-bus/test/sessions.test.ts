// Session-enabled queues (RequiresSession) through createApp: a session receiver per
// session, several sessions at once, each in order, the settlement rules unchanged.
// Run on a stand-in started in this process (it models sessions; the shared lab
// instance may be an older build).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, withAttempts, type AppOptions } from '@babelqueue/core';
import { AzureServiceBusTransport, type AzureServiceBusTransportOptions } from '@babelqueue/azure-service-bus';
import { startStandIn, type StandIn } from '../../../test/support/asb-standin/server.js';
import { bytesOf, captureLogger, envelope, Raw, uniqueQueue } from './support/lab.js';
import { until } from '../../../test/support/until.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 15_000;

describe('Azure Service Bus: session-enabled queues', () => {
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

  function sessionQueue(prefix: string): string {
    const queue = uniqueQueue(prefix);
    standIn.namespace.queue(queue).config.requiresSession = true;
    return queue;
  }

  function app(queue: string, options: Partial<AppOptions> = {}, transportOptions: Partial<AzureServiceBusTransportOptions> = {}) {
    const logger = captureLogger();
    const transport = new AzureServiceBusTransport({ connectionString: url, logger, sessionQueues: [queue], ...transportOptions });
    return { app: createApp({ transport, queue, logger, ...options }), transport, logger };
  }

  /** Sends envelopes of `orders` to their sessions with the raw client, in this order. */
  async function sendToSessions(queue: string, orders: Array<{ session: string; n: number }>): Promise<void> {
    for (const { session, n } of orders) {
      const { body, projection } = envelope(URN, { session, n }, queue);
      await raw.send(queue, { body, messageId: projection.messageId, subject: URN, sessionId: session });
    }
  }

  it('consumes every session, one message at a time and in order within a session, several sessions at once', async () => {
    const queue = sessionQueue('bq-asb-sessions');
    const orders = [0, 1, 2, 3].flatMap((n) => ['s1', 's2', 's3'].map((session) => ({ session, n })));
    await sendToSessions(queue, orders);
    const { app: a } = app(queue);
    const seen = new Map<string, number[]>();
    const running = new Set<string>();
    let overlapped = false;
    let bothAtOnce = 0;
    a.handle(URN, async (data: { session: string; n: number }) => {
      assert.ok(!running.has(data.session), `two messages of ${data.session} at once`);
      running.add(data.session);
      if (running.size > 1) overlapped = true;
      seen.set(data.session, [...(seen.get(data.session) ?? []), data.n]);
      // The first message of a session waits (bounded) for another session to be handled beside it.
      if (data.n === 0) {
        bothAtOnce += 1;
        await until(() => overlapped || bothAtOnce >= 3, 10_000, 'a second session handled at the same time').catch(() => undefined);
      }
      running.delete(data.session);
    });
    try {
      assert.equal(await a.consume({ maxMessages: orders.length, idleMs: IDLE_MS, concurrency: 3 }), orders.length);
    } finally {
      await a.close();
    }
    for (const session of ['s1', 's2', 's3']) assert.deepEqual(seen.get(session), [0, 1, 2, 3], `${session} in order`);
    assert.ok(overlapped, 'sessions are handled concurrently');
  });

  it('an immediate retry abandons: the session keeps its order and the message comes back first, attempts counted', async () => {
    const queue = sessionQueue('bq-asb-sessions-abandon');
    await sendToSessions(queue, [{ session: 's', n: 1 }, { session: 's', n: 2 }]);
    const { app: a } = app(queue, { maxAttempts: 3 });
    const seen: Array<[number, number]> = [];
    a.handle(URN, (data: { n: number }, message) => {
      seen.push([data.n, message.attempts]);
      if (seen.length === 1) throw new Error('boom');
    });
    try {
      assert.equal(await a.consume({ maxMessages: 3, idleMs: IDLE_MS }), 3);
    } finally {
      await a.close();
    }
    assert.deepEqual(seen, [[1, 1], [1, 2], [2, 1]]);
  });

  it('a delayed retry is a scheduled copy in the same session; exhausted, the record goes to <queue>.dlq', async () => {
    const queue = sessionQueue('bq-asb-sessions-retry');
    await sendToSessions(queue, [{ session: 'keep', n: 1 }]);
    const { app: a } = app(queue, { maxAttempts: 2, retryBackoff: { baseMs: 600_000 }, deadLetter: true });
    a.handle(URN, () => {
      throw new Error('boom');
    });
    try {
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await a.close();
    }
    const receiver = raw.client.createReceiver(queue, { skipParsingBodyAsJson: true });
    let copy;
    try {
      const peeked = await receiver.peekMessages(10);
      assert.equal(peeked.length, 1, 'only the scheduled copy is left');
      copy = peeked[0]!;
      assert.equal(copy.state, 'scheduled');
      assert.equal(copy.sessionId, 'keep', 'the copy keeps its SessionId');
      assert.equal(JSON.parse(bytesOf(copy).toString('utf8')).attempts, 1);
    } finally {
      await receiver.close();
    }
    // The copy, made due now, fails its last attempt: a failed record in <queue>.dlq.
    const due = envelope(URN, { session: 'keep', n: 1 }, queue);
    await raw.send(queue, { body: withAttempts(due.body, 1), messageId: `${due.projection.messageId}-due`, subject: URN, sessionId: 'keep' });
    const { app: b } = app(queue, { maxAttempts: 2, retryBackoff: { baseMs: 600_000 }, deadLetter: true });
    b.handle(URN, () => {
      throw new Error('boom');
    });
    try {
      assert.equal(await b.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await b.close();
    }
    const [record, ...rest] = await raw.drain(`${queue}.dlq`);
    assert.equal(rest.length, 0);
    assert.equal(JSON.parse(bytesOf(record!).toString('utf8')).dead_letter.reason, 'failed');
    assert.equal(record!.sessionId, 'keep');
  });

  it('with dead-lettering off, a poison body in a session is dead-lettered natively into $DeadLetterQueue', async () => {
    const queue = sessionQueue('bq-asb-sessions-poison');
    await raw.send(queue, { body: Buffer.from('not an envelope'), sessionId: 'p' });
    await sendToSessions(queue, [{ session: 'p', n: 2 }]);
    const { app: a } = app(queue);
    const seen: number[] = [];
    a.handle(URN, (data: { n: number }) => void seen.push(data.n));
    try {
      assert.equal(await a.consume({ maxMessages: 2, idleMs: IDLE_MS }), 2);
    } finally {
      await a.close();
    }
    assert.deepEqual(seen, [2], 'the session goes on after the poison body');
    const [dead, ...rest] = await raw.drain(queue, { subQueue: 'deadLetter' });
    assert.equal(rest.length, 0);
    assert.equal(dead!.deadLetterReason, 'poison');
    assert.equal(bytesOf(dead!).toString('utf8'), 'not an envelope', 'the body unchanged');
  });

  it('renews the session lock while a handler outlives it: completed once, never redelivered', async () => {
    const queue = sessionQueue('bq-asb-sessions-renew');
    // Renewals go out 1.5 s before a lapse: room for a loaded machine.
    standIn.namespace.queue(queue).config.lockDurationMs = 3_000;
    await sendToSessions(queue, [{ session: 'slow', n: 1 }, { session: 'slow', n: 2 }]);
    const { app: a } = app(queue, {}, { lockDurationMs: 3_000 });
    const seen: Array<[number, number]> = [];
    a.handle(URN, async (data: { n: number }, message) => {
      seen.push([data.n, message.attempts]);
      // Longer than two lock durations: only renewals keep the session.
      if (data.n === 1) await new Promise((resolve) => setTimeout(resolve, 7_000));
    });
    try {
      assert.equal(await a.consume({ maxMessages: 2, idleMs: IDLE_MS }), 2);
    } finally {
      await a.close();
    }
    assert.deepEqual(seen, [[1, 1], [2, 1]], 'each once, in order, first attempt');
    assert.deepEqual(standIn.namespace.queue(queue).counts(Date.now()), { active: 0, locked: 0, scheduled: 0, deferred: 0 });
  });

  it('purges a session queue a session at a time; scheduled messages stay', async () => {
    const queue = sessionQueue('bq-asb-sessions-purge');
    await sendToSessions(queue, [{ session: 'a', n: 1 }, { session: 'b', n: 1 }, { session: 'a', n: 2 }]);
    const later = envelope(URN, { n: 3 }, queue);
    await raw.send(queue, { body: later.body, sessionId: 'c', scheduledEnqueueTimeUtc: new Date(Date.now() + 600_000) });
    const { transport } = app(queue);
    try {
      assert.equal(await transport.purge(queue), 3);
    } finally {
      await transport.close();
    }
    assert.deepEqual(standIn.namespace.queue(queue).counts(Date.now()), { active: 0, locked: 0, scheduled: 1, deferred: 0 });
  });

  it('publishes with a SessionId: a fixed one, or one computed from each message', async () => {
    const queue = sessionQueue('bq-asb-sessions-publish');
    const { app: a } = app(queue, {}, { sessionId: (message) => (JSON.parse(message.body.toString('utf8')) as { data: { customer: string } }).data.customer });
    try {
      await a.publish(URN, { customer: 'c-1' });
      await a.publish(URN, { customer: 'c-2' });
    } finally {
      await a.close();
    }
    const { app: b } = app(queue, {}, { sessionId: 'fixed' });
    try {
      await b.publish(URN, { customer: 'c-3' });
    } finally {
      await b.close();
    }
    const receiver = raw.client.createReceiver(queue, { skipParsingBodyAsJson: true });
    try {
      const peeked = await receiver.peekMessages(10);
      assert.deepEqual(peeked.map((m) => m.sessionId), ['c-1', 'c-2', 'fixed']);
    } finally {
      await receiver.close();
    }
  });
});
