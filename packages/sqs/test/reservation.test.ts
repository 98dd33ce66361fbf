import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigurationError, createApp, type AppOptions } from '@babelqueue/core';
import type { SqsTransportOptions } from '@babelqueue/sqs';
import { SQSClient } from '@aws-sdk/client-sqs';
import { CREDENTIALS, envelope, Raw, REGION, sleep, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';

/** The visibility timeout as the reservation: heartbeat, timeouts, shutdown, close, concurrency, FIFO groups. */
describe('SQS reservation and the consume loop', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  function app(queue: string, options: Partial<AppOptions> = {}, transportOptions: SqsTransportOptions = {}) {
    const { transport: t, logger } = transport(transportOptions);
    return { app: createApp({ transport: t, queue, logger, ...options }), transport: t, logger };
  }

  it('the heartbeat keeps a slow handler\'s message invisible past its visibility timeout', async () => {
    const q = await raw.fresh('heartbeat');
    // Renewed every 750 ms: a renewal would have to be over 2 s late for the message to show.
    const { app: a, transport: t } = app(q.name, {}, { visibilityTimeoutSeconds: 3 });
    assert.equal(t.reservationMs(), 3000);
    await a.publish(URN, {});
    let calls = 0;
    let release!: () => void;
    const finished = new Promise<void>((resolve) => (release = resolve));
    const started = new Promise<void>((resolve) => {
      a.handle(URN, async () => {
        calls += 1;
        resolve();
        await finished;
      });
    });
    const consuming = a.consume({ maxMessages: 1, idleMs: 1000 });
    try {
      await started;
      // Look for it for 7 s: over twice its visibility timeout. Without renewal it would be visible after 3 s.
      const until = Date.now() + 7000;
      while (Date.now() < until) {
        assert.equal(await raw.peek(q.url, 0, 0), undefined, 'the message must stay invisible while its handler runs');
        await sleep(100);
      }
    } finally {
      release();
      await consuming;
      await a.close();
    }
    assert.equal(calls, 1);
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 }, 'deleted once handled');
  });

  it('a handler timeout must be below the visibility timeout', async () => {
    const q = await raw.fresh('timeout-check');
    const { app: a } = app(q.name, { handlerTimeoutMs: 2000 }, { visibilityTimeoutSeconds: 2 });
    a.handle(URN, () => undefined);
    await assert.rejects(a.consume({ idleMs: 100 }), (e: Error) => e instanceof ConfigurationError && /handlerTimeoutMs \(2000\) must be below the sqs reservation of 2000 ms/.test(e.message));
    await a.close();
  });

  it('a handler past its timeout is failed and released; the next delivery counts attempt 2', async () => {
    const q = await raw.fresh('timeout');
    const { app: a } = app(q.name, { handlerTimeoutMs: 300, maxAttempts: 3 });
    const attempts: number[] = [];
    a.handle(URN, async (_data, message) => {
      attempts.push(message.attempts);
      if (attempts.length === 1) await new Promise((resolve) => message.signal.addEventListener('abort', resolve));
    });
    await a.publish(URN, {});
    assert.equal(await a.consume({ maxMessages: 2, idleMs: 3000 }), 2);
    await a.close();
    assert.deepEqual(attempts, [1, 2]);
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });

  it('shutdown past its deadline leaves the message undeleted: it comes back when its visibility lapses', async () => {
    const q = await raw.fresh('shutdown');
    const { app: a, logger, transport: t } = app(q.name, { shutdownTimeoutMs: 200 }, { visibilityTimeoutSeconds: 1 });
    const { body, projection } = envelope(URN, {}, q.name);
    await t.publish({ body, queue: q.name, projection });
    const stop = new AbortController();
    const started = new Promise<void>((resolve) => {
      a.handle(URN, async (_data, message) => {
        resolve();
        await new Promise((r) => message.signal.addEventListener('abort', r));
      });
    });
    const running = a.run({ signal: stop.signal });
    await started;
    stop.abort();
    await running;
    assert.match(logger.text(), /shutdown deadline passed: 1 message\(s\) left unsettled/);
    const back = await raw.until('the message back', () => raw.peek(q.url, 30, 1), (m) => m !== undefined);
    assert.equal(back!.Body, body.toString());
    assert.equal(back!.Attributes!.ApproximateReceiveCount, '2');
  });

  it('close() cancels a long poll at once and ends the consume loop', async () => {
    const q = await raw.fresh('close');
    const { transport: t } = transport({ waitTimeSeconds: 20 });
    const consuming = t.consume(q.name, async () => undefined, { concurrency: 1, signal: new AbortController().signal });
    await sleep(300);
    const closedWithin = await Promise.race([t.close().then(() => consuming).then(() => true), sleep(5000).then(() => false)]);
    assert.ok(closedWithin, 'close ended the 20 s poll');
  });

  it('short polling (waitTimeSeconds 0) pauses after an empty answer instead of spinning', async () => {
    const q = await raw.fresh('short-poll');
    const client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
    let receives = 0;
    client.middlewareStack.add((next) => async (args) => {
      if ((args.input as { WaitTimeSeconds?: number }).WaitTimeSeconds !== undefined) receives += 1;
      return next(args);
    }, { step: 'initialize' });
    const { transport: t } = transport({ client, waitTimeSeconds: 0 });
    try {
      await t.consume(q.name, async () => undefined, { concurrency: 1, signal: new AbortController().signal, idleMs: 2500 });
    } finally {
      await t.close();
      client.destroy();
    }
    assert.ok(receives >= 2 && receives <= 4, `${receives} receives in 2.5 s`);
  });

  it('a connection cut during the queue look-up at consume start is retried, not the end of the worker', async () => {
    // Found by test/reliability: a cut (ss -K) right as a worker started made its run() reject.
    const q = await raw.fresh('lookup-cut');
    await raw.send(q.url, envelope(URN, {}, q.name).body.toString('utf8'));
    const client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
    let cut = 0;
    client.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'GetQueueUrlCommand' && cut < 2) {
        cut += 1;
        throw Object.assign(new Error('write ECONNABORTED'), { code: 'ECONNABORTED' });
      }
      return next(args);
    }, { step: 'initialize' });
    const { transport: t, logger } = transport({ client });
    const handled: string[] = [];
    try {
      await t.consume(q.name, async (delivery) => {
        handled.push(delivery.body.toString());
        await delivery.settle({ kind: 'ack' });
      }, { concurrency: 1, signal: new AbortController().signal, maxMessages: 1, idleMs: 20_000 });
    } finally {
      await t.close();
      client.destroy();
    }
    assert.equal(cut, 2, 'the look-up failed twice');
    assert.equal(handled.length, 1, 'the message was consumed once the look-up went through');
    assert.equal(logger.lines.filter((l) => l.message === 'queue look-up failed; trying again').length, 2, 'each failure logged');
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });

  it('a missing queue still fails consume at once (no retry)', async () => {
    const { transport: t } = transport();
    try {
      await assert.rejects(t.consume(`bq-sqs-missing-${Date.now()}`, async () => undefined, { concurrency: 1, signal: new AbortController().signal }), { name: 'QueueNotFoundError' });
    } finally {
      await t.close();
    }
  });

  it('concurrency: up to `concurrency` handlers at once, one receive asking for the free slots', async () => {
    const q = await raw.fresh('concurrency');
    const { app: a } = app(q.name);
    for (let i = 0; i < 5; i++) await a.publish(URN, { i });
    let running = 0;
    let peak = 0;
    let release!: () => void;
    const all = new Promise<void>((resolve) => (release = resolve));
    a.handle(URN, async () => {
      running += 1;
      peak = Math.max(peak, running);
      if (peak === 5) release();
      await Promise.race([all, sleep(10_000)]);
      running -= 1;
    });
    assert.equal(await a.consume({ concurrency: 5, maxMessages: 5, idleMs: 3000 }), 5);
    await a.close();
    assert.equal(peak, 5);
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });

  it('FIFO: a group is handled in order even when its first message is retried', async () => {
    const q = await raw.fresh('fifo-order', { fifo: true });
    const { app: a } = app(q.name, { maxAttempts: 3 });
    for (const n of [1, 2, 3]) await a.publish(URN, { n }, { key: 'g' });
    const order: number[] = [];
    let failed = false;
    a.handle<{ n: number }>(URN, (data) => {
      order.push(data.n);
      if (data.n === 1 && !failed) {
        failed = true;
        throw new Error('once');
      }
    });
    assert.equal(await a.consume({ concurrency: 10, idleMs: 1500 }), 4);
    await a.close();
    assert.deepEqual(order, [1, 1, 2, 3], 'nothing of the group ran before its first message succeeded');
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });
});
