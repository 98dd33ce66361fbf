// Every settlement path through createApp, over the official @azure/service-bus
// client against the Service Bus stand-in (or a real namespace), read back with
// the same official client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, UnrecoverableError, withAttempts, type AppOptions } from '@babelqueue/core';
import { AzureServiceBusTransport, POISON_REASON, VERSION_GATE_REASON } from '@babelqueue/azure-service-bus';
import { asb, bytesOf, captureLogger, configureQueue, envelope, isStandIn, peekWire, Raw, uniqueQueue } from './support/lab.js';
import { until } from '../../../test/support/until.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 30_000;

describe('Azure Service Bus settlement through the App', { skip: asb.skip }, () => {
  const url = asb.url!;
  let raw: Raw;
  before(() => {
    raw = new Raw(url);
  });
  after(async () => {
    await raw.close();
  });

  async function names(prefix: string, settings: Parameters<typeof configureQueue>[2] = {}) {
    const queue = uniqueQueue(`bq-asb-${prefix}`);
    const dlq = `${queue}.dlq`;
    await configureQueue(url, queue, settings);
    await configureQueue(url, dlq);
    return { queue, dlq };
  }

  function app(queue: string, options: Partial<AppOptions> = {}, transportOptions: Partial<ConstructorParameters<typeof AzureServiceBusTransport>[0]> = {}) {
    const logger = captureLogger();
    const transport = new AzureServiceBusTransport({ connectionString: url, logger, ...transportOptions });
    return { app: createApp({ transport, queue, logger, ...options }), transport, logger };
  }

  it('abandons a failing handler: attempts reconciled from DeliveryCount, then <queue>.dlq with the counted attempt', async () => {
    const { queue, dlq } = await names('exhaust');
    const { app: a, transport } = app(queue, { deadLetter: true, maxAttempts: 3 });
    const attempts: number[] = [];
    a.handle(URN, (_data, message) => {
      attempts.push(message.attempts);
      throw new Error('boom');
    });
    const { body, projection } = envelope(URN, { order_id: 2 }, queue);
    try {
      await transport.publish({ body, queue, projection });
      assert.equal(await a.consume({ maxMessages: 3, idleMs: IDLE_MS }), 3);
    } finally {
      await a.close();
    }
    assert.deepEqual(attempts, [1, 2, 3]);
    const [record, ...rest] = await raw.drain(dlq);
    assert.equal(rest.length, 0);
    const parsed = JSON.parse(bytesOf(record!).toString('utf8'));
    assert.equal(parsed.dead_letter.reason, 'failed');
    assert.equal(parsed.dead_letter.attempts, 3);
    assert.equal(parsed.dead_letter.original_queue, queue);
    assert.equal(parsed.trace_id, projection.traceId);
    assert.equal(parsed.meta.id, projection.messageId);
    assert.equal(record!.subject, URN);
    assert.equal(record!.messageId, projection.messageId);
    assert.deepEqual(await raw.drain(queue, { waitMs: 300 }), []);
  });

  it("the entity's MaxDeliveryCount moves an abandoned message to $DeadLetterQueue (no App cap)", async () => {
    const { queue } = await names('native-max', { maxDeliveryCount: 2 });
    const { app: a } = app(queue, { maxAttempts: 0 });
    a.handle(URN, () => {
      throw new Error('boom');
    });
    try {
      await a.publish(URN, { order_id: 4 });
      assert.equal(await a.consume({ maxMessages: 2, idleMs: IDLE_MS }), 2);
    } finally {
      await a.close();
    }
    const [dead] = await raw.drain(queue, { subQueue: 'deadLetter' });
    assert.equal(dead!.deadLetterReason, 'MaxDeliveryCountExceeded');
    assert.equal(dead!.deliveryCount, 2);
  });

  it('a retry with backoff is a scheduled copy with attempts + 1; the original is completed', async () => {
    const { queue } = await names('backoff');
    const { app: a, transport } = app(queue, { maxAttempts: 3, retryBackoff: { baseMs: 60_000 } });
    a.handle(URN, () => {
      throw new Error('boom');
    });
    const { body, projection } = envelope(URN, { order_id: 5 }, queue);
    try {
      await transport.publish({ body, queue, projection, headers: { traceparent: 'tp-5' } });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await a.close();
    }
    const receiver = raw.client.createReceiver(queue, { skipParsingBodyAsJson: true });
    try {
      const [copy, ...rest] = await receiver.peekMessages(10);
      assert.equal(rest.length, 0, 'only the scheduled copy is left');
      assert.ok(bytesOf(copy!).equals(withAttempts(body, 1)), 'the copy is the original bytes with attempts 1');
      assert.equal(copy!.state, 'scheduled');
      assert.ok(copy!.scheduledEnqueueTimeUtc!.getTime() > Date.now() + 30_000, 'scheduled one backoff (60 s) ahead');
      assert.equal(copy!.applicationProperties!.traceparent, 'tp-5');
    } finally {
      await receiver.close();
    }
  });

  it('an UnrecoverableError goes to <queue>.dlq on attempt 1; a handler timeout takes the retry path', async () => {
    const { queue, dlq } = await names('unrecoverable');
    const { app: a } = app(queue, { deadLetter: true, maxAttempts: 2, handlerTimeoutMs: 300 });
    const seen: number[] = [];
    a.handle(URN, async (data, message) => {
      seen.push(message.attempts);
      if (data.kind === 'fatal') throw new UnrecoverableError('no');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    });
    try {
      await a.publish(URN, { kind: 'fatal' });
      await a.publish(URN, { kind: 'slow' });
      assert.equal(await a.consume({ maxMessages: 3, idleMs: IDLE_MS }), 3);
    } finally {
      await a.close();
    }
    const records = (await raw.drain(dlq)).map((m) => JSON.parse(bytesOf(m).toString('utf8')));
    const fatal = records.find((r) => r.data.kind === 'fatal');
    const slow = records.find((r) => r.data.kind === 'slow');
    assert.equal(fatal.dead_letter.attempts, 1);
    assert.equal(fatal.dead_letter.exception, 'UnrecoverableError');
    assert.equal(slow.dead_letter.attempts, 2, 'the slow one timed out twice');
  });

  const POISON: [string, Buffer][] = [
    ['malformed JSON', Buffer.from('{"job":')],
    ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0x7b])],
    ['an identity-less object', Buffer.from('{"data":{},"meta":{"schema_version":1}}')],
    ['a JSON array', Buffer.from('[1,2]')],
    ['an empty body', Buffer.alloc(0)],
    ['an oversized body', Buffer.from(JSON.stringify({ job: URN, pad: 'x'.repeat(5000) }))],
  ];

  describe('poison with a <queue>.dlq sender: the poison record, then complete', () => {
    for (const [what, body] of POISON) {
      it(what, async () => {
        const { queue, dlq } = await names('poison');
        const { app: a } = app(queue, { deadLetter: true, maxBodyBytes: 4096 });
        a.handle(URN, () => assert.fail('poison never reaches a handler'));
        try {
          await raw.send(queue, { body, contentType: 'application/json' });
          assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        } finally {
          await a.close();
        }
        const [record] = await raw.drain(dlq);
        const parsed = JSON.parse(bytesOf(record!).toString('utf8'));
        assert.equal(parsed.dead_letter.reason, 'poison');
        assert.equal(parsed.dead_letter.attempts, 1);
        assert.deepEqual(await raw.drain(queue, { waitMs: 300 }), []);
      });
    }
  });

  it('poison without a DLQ: explicit dead-letter into $DeadLetterQueue with reason and description, body unchanged', async () => {
    const { queue } = await names('poison-native');
    const { app: a } = app(queue);
    const body = Buffer.from('{"job":');
    try {
      await raw.send(queue, { body });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await a.close();
    }
    const [dead] = await raw.drain(queue, { subQueue: 'deadLetter' });
    assert.ok(bytesOf(dead!).equals(body), 'the body is unchanged');
    assert.equal(dead!.deadLetterReason, POISON_REASON);
    assert.match(dead!.deadLetterErrorDescription!, /poison/);
  });

  describe('the version gate on bq-schema-version', () => {
    const cases: [string, unknown, 'handled' | 'gated'][] = [
      ['integer 1', 1, 'handled'],
      ['string "1"', '1', 'handled'],
      ['null (absent)', null, 'handled'],
      ['blank', '  ', 'handled'],
      ['string "2"', '2', 'gated'],
      ['integer 2', 2, 'gated'],
      ['1.5', 1.5, 'gated'],
      ['" 1 " (never trimmed)', ' 1 ', 'gated'],
    ];
    for (const [what, value, expected] of cases) {
      it(`${what}: ${expected}`, async () => {
        const { queue, dlq } = await names('gate');
        const { app: a } = app(queue, { deadLetter: true });
        let handled = 0;
        a.handle(URN, () => void handled++);
        const { body, projection } = envelope(URN, { n: 1 }, queue);
        try {
          await raw.send(queue, { body, subject: URN, messageId: projection.messageId, applicationProperties: { 'bq-schema-version': value as any, traceparent: 'tp-g' } });
          assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        } finally {
          await a.close();
        }
        const records = await raw.drain(dlq, { waitMs: 500 });
        if (expected === 'handled') {
          assert.equal(handled, 1);
          assert.equal(records.length, 0);
        } else {
          assert.equal(handled, 0);
          assert.ok(bytesOf(records[0]!).equals(body), 'the raw body, byte for byte, no dead_letter block');
          assert.equal(records[0]!.applicationProperties!['bq-schema-version'], undefined);
          assert.equal(records[0]!.applicationProperties!.traceparent, 'tp-g');
          assert.equal(records[0]!.subject, URN);
        }
      });
    }

    it('gated without a DLQ: explicit dead-letter into $DeadLetterQueue ("unsupported schema version")', async () => {
      const { queue } = await names('gate-native');
      const { app: a } = app(queue);
      const { body } = envelope(URN, { n: 1 }, queue);
      try {
        await raw.send(queue, { body, applicationProperties: { 'bq-schema-version': '2' } });
        assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      } finally {
        await a.close();
      }
      const [dead] = await raw.drain(queue, { subQueue: 'deadLetter' });
      assert.ok(bytesOf(dead!).equals(body), 'the body is unchanged');
      assert.equal(dead!.deadLetterReason, VERSION_GATE_REASON);
      assert.equal(dead!.applicationProperties!['bq-schema-version'], '2');
    });
  });

  it('a failed DLQ write abandons the message; the redelivery writes the record', async () => {
    const { queue, dlq } = await names('dlq-fail');
    await configureQueue(url, dlq, { status: 'SendDisabled' });
    const { app: a, logger } = app(queue, { deadLetter: true });
    try {
      await raw.send(queue, { body: Buffer.from('not json') });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      assert.match(logger.text(), /dead-letter write failed/);
      await configureQueue(url, dlq, { status: 'Active' });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await a.close();
    }
    const [record] = await raw.drain(dlq);
    const parsed = JSON.parse(bytesOf(record!).toString('utf8'));
    assert.equal(parsed.raw, 'not json');
    assert.equal(parsed.dead_letter.attempts, 2, 'the second delivery wrote it');
    assert.deepEqual(await raw.drain(queue, { waitMs: 300 }), []);
  });

  it('renews the lock of a handler that outlives it: handled once, never redelivered', async () => {
    const { queue } = await names('renew', { lockDurationMs: 1_000 });
    const { app: a } = app(queue, {}, { lockDurationMs: 1_000 });
    let calls = 0;
    a.handle(URN, async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 3_500));
    });
    try {
      await a.publish(URN, { n: 1 });
      // Stops at the one delivery; the bound is only reached by a failing run. A lost lock would
      // leave the message on the queue (its complete refused), which the drain below would find.
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await a.close();
    }
    assert.equal(calls, 1);
    assert.deepEqual(await raw.drain(queue, { waitMs: 300 }), []);
  });

  it('a completion refused for a lapsed lock is logged, not thrown: the message comes back and is handled again (at-least-once)', { skip: !isStandIn(url) && 'reads the lapse off the stand-in\'s wire (peekWire)' }, async () => {
    const { queue } = await names('lost-lock', { lockDurationMs: 1_000 });
    // No renewal: the handler outlives the lock on purpose.
    const { app: a, logger } = app(queue, {}, { lockDurationMs: 1_000, maxLockRenewalMs: 0 });
    let calls = 0;
    a.handle(URN, async () => {
      calls++;
      // The first time, return only once the broker counted the lapsed lock (a failed delivery).
      if (calls === 1) await until(async () => (await peekWire(url, queue))[0]?.deliveryCount === 1, 20_000, 'the lock to lapse');
    });
    try {
      await a.publish(URN, { n: 1 });
      assert.equal(await a.consume({ maxMessages: 2, idleMs: IDLE_MS }), 2);
    } finally {
      await a.close();
    }
    assert.equal(calls, 2, 'handled again after the refused completion');
    assert.match(logger.text(), /the message lock was lost before settlement/);
    assert.deepEqual(await raw.drain(queue, { waitMs: 300 }), [], 'the second completion ended it');
  });

  it('shutdown leaves an in-flight message unsettled: abandoned and redelivered', async () => {
    const { queue } = await names('shutdown');
    const { app: a } = app(queue, { shutdownTimeoutMs: 200 });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    a.handle(URN, (_d, message) => new Promise((resolve) => {
      started();
      message.signal.addEventListener('abort', () => resolve(undefined));
    }));
    await a.publish(URN, { n: 1 });
    const stop = new AbortController();
    const run = a.run({ signal: stop.signal });
    await running;
    stop.abort();
    await run;
    await a.close();
    const [again] = await raw.drain(queue);
    assert.equal(again!.deliveryCount, 1, 'abandoned once');
  });

  it('handles up to `concurrency` messages at once', async () => {
    const { queue } = await names('concurrency');
    const { app: a } = app(queue);
    let inFlight = 0;
    let most = 0;
    a.handle(URN, async () => {
      most = Math.max(most, ++inFlight);
      // Hold the first one until a second is handed over beside it (bounded): no race against the receive.
      await until(() => most > 1, 10_000).catch(() => undefined);
      inFlight--;
    });
    try {
      for (let i = 0; i < 6; i++) await a.publish(URN, { i });
      assert.equal(await a.consume({ maxMessages: 6, idleMs: IDLE_MS, concurrency: 3 }), 6);
    } finally {
      await a.close();
    }
    assert.ok(most > 1 && most <= 3, `at most 3 at once, more than 1 (saw ${most})`);
  });

});
