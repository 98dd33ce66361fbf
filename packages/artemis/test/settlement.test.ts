import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import rhea, { type Message as AmqpMessage } from 'rhea';
import { createApp, withAttempts, type AppOptions, type Message } from '@babelqueue/core';
import { projectArtemis, recordProjection } from '@babelqueue/core/binding';
import { ArtemisTransport, type ArtemisTransportOptions } from '@babelqueue/artemis';
import { artemis, artemisUrl, captureLogger, envelope, Raw, uniqueQueue } from './support/artemis.js';

const URN = 'urn:babel:orders:created';
const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** Every settlement path of the spec's table, through createApp, on the lab's Artemis. */
describe('Artemis settlement through the App', { skip: artemis.skip }, () => {
  let raw: Raw;
  const created: string[] = [];

  before(async () => {
    raw = await Raw.open();
  });
  after(async () => {
    await raw.cleanup(...created);
    await raw.close();
  });

  function names(prefix: string) {
    const queue = uniqueQueue(`bq-art-${prefix}`);
    const dlq = `${queue}.dlq`;
    created.push(queue, dlq);
    return { queue, dlq };
  }

  function app(queue: string, options: Partial<AppOptions> = {}, transportOptions: Partial<ArtemisTransportOptions> = {}) {
    const logger = captureLogger();
    const transport = new ArtemisTransport({ url: artemisUrl(), requeueDelayMs: 50, logger, ...transportOptions });
    const instance = createApp({ transport, queue, logger, ...options });
    return { app: instance, transport, logger };
  }

  /** A message as a foreign AMQP producer would send it, with the Artemis projection of `body`. */
  function foreign(body: unknown, properties: Record<string, unknown> = {}): AmqpMessage {
    return {
      durable: true,
      body,
      message_annotations: { 'x-opt-jms-type': URN },
      application_properties: { bq_schema_version: '1', bq_source_lang: 'go', bq_attempts: '0', bq_app_id: 'babelqueue', ...properties },
    };
  }

  it('a failing handler is settled modified: Artemis counts each redelivery (delivery-count), the body stays as sent; at the cap the DLQ record carries the counted attempt', async () => {
    const { queue, dlq } = names('exhaust');
    const { body, projection } = envelope(URN, { order_id: 3 }, queue);
    const { app: a, transport } = app(queue, { maxAttempts: 3, deadLetter: true });
    await transport.publish({ body, queue, projection, headers: { traceparent: TP } });
    const seen: { attempts: number; bodyAttempts: number; bytes: Buffer }[] = [];
    a.handle(URN, (_data, message) => {
      seen.push({ attempts: message.attempts, bodyAttempts: message.envelope.attempts, bytes: message.body });
      throw new TypeError('gateway timeout');
    });
    assert.equal(await a.consume({ maxMessages: 3, idleMs: 5000 }), 3);
    await a.close();
    assert.deepEqual(seen.map((s) => s.attempts), [1, 2, 3], 'max(body.attempts, delivery-count) + 1 across real redeliveries');
    assert.deepEqual(seen.map((s) => s.bodyAttempts), [0, 0, 0], 'the count came from the broker, not from a re-sent body');
    for (const s of seen) assert.ok(s.bytes.equals(body), 'the same bytes on every delivery');
    await raw.waitForCount(queue, 0);
    const [record] = await raw.take(dlq);
    const lastDelivered = withAttempts(body, 3);
    assert.ok(record!.body.subarray(0, lastDelivered.length - 1).equals(lastDelivered.subarray(0, -1)), 'the envelope verbatim plus a dead_letter member');
    const parsed = JSON.parse(record!.body.toString('utf8'));
    assert.deepEqual(
      [parsed.dead_letter.reason, parsed.dead_letter.attempts, parsed.dead_letter.error, parsed.dead_letter.exception, parsed.dead_letter.original_queue],
      ['failed', 3, 'gateway timeout', 'TypeError', queue],
    );
    const m = record!.message;
    assert.equal(typeof m.body, 'string', 'an AMQP-value string, like every envelope');
    assert.equal(m.message_annotations?.['x-opt-jms-type'], URN);
    assert.equal(m.subject, URN);
    assert.equal(m.correlation_id, projection.traceId);
    assert.equal(m.message_id, projection.messageId);
    assert.equal(m.durable, true);
    assert.equal(m.application_properties?.bq_attempts, '3', 'the native projection agrees with the record');
    assert.equal(m.application_properties?.traceparent, TP);
  });

  it('a backoff re-sends the copy with x-opt-delivery-time and the attempts in the body; it arrives no earlier than the delay', async () => {
    const { queue } = names('backoff');
    const { body, projection } = envelope(URN, { order_id: 4 }, queue);
    const { app: a, transport } = app(queue, { maxAttempts: 2, retryBackoff: { baseMs: 400, multiplier: 1 } });
    await transport.publish({ body, queue, projection });
    const seen: { at: number; message: Message }[] = [];
    a.handle(URN, (_data, message) => {
      seen.push({ at: Date.now(), message });
      throw new Error('later');
    });
    assert.equal(await a.consume({ maxMessages: 2, idleMs: 10_000 }), 2);
    await a.close();
    const gap = seen[1]!.at - seen[0]!.at;
    assert.ok(gap >= 390, `redelivered after ${gap} ms`);
    const second = seen[1]!.message;
    assert.ok(second.body.equals(withAttempts(body, 1)), 'a byte-preserving copy with attempts 1');
    assert.equal(second.attempts, 2);
    assert.equal(second.headers.bq_attempts, '1', 'bq_attempts agrees with the body');
    assert.equal(second.headers.bq_delay, '400', 'the delay is mirrored on bq_delay');
    assert.equal(second.id, projection.messageId);
  });

  it('after a re-send put a higher count in the body, a retry without delay is re-sent too (a modified redelivery would not count it)', async () => {
    const { queue, dlq } = names('resent-count');
    const { body } = envelope(URN, { order_id: 5 }, queue);
    await raw.send(queue, foreign(withAttempts(body, 2).toString('utf8'), { bq_attempts: '2' }));
    const { app: a } = app(queue, { maxAttempts: 5, deadLetter: true });
    const attempts: number[] = [];
    a.handle(URN, (_data, message) => {
      attempts.push(message.attempts);
      throw new Error('again');
    });
    assert.equal(await a.consume({ maxMessages: 3, idleMs: 5000 }), 3);
    await a.close();
    assert.deepEqual(attempts, [3, 4, 5]);
    const [record] = await raw.take(dlq);
    assert.equal(JSON.parse(record!.body.toString('utf8')).dead_letter.attempts, 5);
  });

  it("a retry that would reach the broker's max-delivery-attempts is re-sent, so Artemis never moves it to its own dead-letter address", async () => {
    const { queue, dlq } = names('broker-max');
    const [ok, why] = await raw.call('broker', { operation: 'addAddressSettings', args: [queue, JSON.stringify({ maxDeliveryAttempts: 2 })] });
    assert.ok(ok, why);
    try {
      const { app: a } = app(queue, { maxAttempts: 4, deadLetter: true }, { brokerMaxDeliveryAttempts: 2 });
      const attempts: number[] = [];
      a.handle(URN, (_data, message) => {
        attempts.push(message.attempts);
        throw new Error('again');
      });
      await a.publish(URN, { order_id: 6 });
      assert.equal(await a.consume({ maxMessages: 4, idleMs: 5000 }), 4);
      await a.close();
      assert.deepEqual(attempts, [1, 2, 3, 4]);
      const [record] = await raw.take(dlq);
      assert.equal(JSON.parse(record!.body.toString('utf8')).dead_letter.attempts, 4);
    } finally {
      await raw.unlimitAddress(queue);
    }
  });

  describe("the broker's max-delivery-attempts below maxAttempts, not given to the transport", () => {
    /** Gives `queue` max-delivery-attempts 2 and its own dead-letter address with a queue, so what Artemis moves there is counted. */
    async function limitDeliveries(queue: string): Promise<string> {
      const dla = `${queue}.artemis-dla`;
      created.push(dla);
      const settings = JSON.stringify({ maxDeliveryAttempts: 2, deadLetterAddress: dla });
      const [ok, why] = await raw.call('broker', { operation: 'addAddressSettings', args: [queue, settings] });
      assert.ok(ok, why);
      const [made, error] = await raw.call('broker', {
        operation: 'createQueue',
        args: [JSON.stringify({ name: dla, address: dla, 'routing-type': 'ANYCAST', durable: true }), true],
      });
      assert.ok(made, error);
      return dla;
    }

    /** maxAttempts 3 against the broker's 2: three deliveries, then the App's own `<queue>.dlq` record. */
    async function exhaust(queue: string, dlq: string, dla: string, transportOptions: Partial<ArtemisTransportOptions> = {}) {
      const { app: a, logger } = app(queue, { maxAttempts: 3, deadLetter: true }, transportOptions);
      const attempts: number[] = [];
      a.handle(URN, (_data, message) => {
        attempts.push(message.attempts);
        throw new Error('again');
      });
      await a.publish(URN, { order_id: 7 });
      const handled = await a.consume({ maxMessages: 3, idleMs: 5000 });
      await a.close();
      assert.equal(await raw.count(dla), 0, "Artemis moved nothing to its own dead-letter address");
      assert.deepEqual(attempts, [1, 2, 3], logger.text());
      assert.equal(handled, 3);
      await raw.waitForCount(queue, 0);
      const [record] = await raw.take(dlq);
      assert.deepEqual([JSON.parse(record!.body.toString('utf8')).dead_letter.reason, JSON.parse(record!.body.toString('utf8')).dead_letter.attempts], ['failed', 3]);
      return logger;
    }

    it('the setting is read from the broker (management): the retry that would reach it is re-sent, the <queue>.dlq record is written', async () => {
      const { queue, dlq } = names('broker-max-read');
      const dla = await limitDeliveries(queue);
      try {
        const logger = await exhaust(queue, dlq, dla);
        assert.doesNotMatch(logger.text(), /max-delivery-attempts/, 'no warning: the broker answered');
      } finally {
        await raw.unlimitAddress(queue);
      }
    });

    it('a user without the manage role: a warning, and every retry is re-sent, which the broker count cannot cut short', async () => {
      const { queue, dlq } = names('broker-max-nomanage');
      const dla = await limitDeliveries(queue);
      const user = `bq-test-${queue.slice(-8)}`;
      const role = `${user}-role`;
      const password = 'not-a-secret';
      const grant = (match: string) => raw.call('broker', {
        // send, consume, create/delete durable queue, create/delete non-durable queue, manage, browse, create/delete address
        operation: 'addSecuritySettings',
        args: [match, `amq,${role}`, `amq,${role}`, `amq,${role}`, 'amq', `amq,${role}`, 'amq', 'amq', `amq,${role}`, `amq,${role}`, 'amq'],
      });
      for (const [operation, args] of [['addUser', [user, password, role, true]], ['grant', [queue]], ['grant', [dlq]]] as const) {
        const [ok, why] = operation === 'grant' ? await grant(args[0]) : await raw.call('broker', { operation, args: [...args] });
        assert.ok(ok, why);
      }
      try {
        const url = new URL(artemis.url!);
        url.username = user;
        url.password = password;
        const logger = await exhaust(queue, dlq, dla, { url: artemisUrl(url.toString()) });
        assert.match(logger.text(), /cannot read the broker's max-delivery-attempts/);
      } finally {
        await raw.call('broker', { operation: 'removeSecuritySettings', args: [queue] });
        await raw.call('broker', { operation: 'removeSecuritySettings', args: [dlq] });
        await raw.call('broker', { operation: 'removeUser', args: [user] });
        await raw.unlimitAddress(queue);
      }
    });
  });

  it('a handler past handlerTimeoutMs is failed (retry path) and its signal aborted', async () => {
    const { queue } = names('timeout');
    const { app: a } = app(queue, { maxAttempts: 3, handlerTimeoutMs: 150 });
    const attempts: number[] = [];
    let aborted = false;
    a.handle(URN, async (_data, message) => {
      attempts.push(message.attempts);
      if (message.attempts === 1) {
        await new Promise<void>((resolve) => message.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted = message.signal.aborted;
      }
    });
    await a.publish(URN, {});
    assert.equal(await a.consume({ maxMessages: 2, idleMs: 5000 }), 2);
    await a.close();
    assert.deepEqual(attempts, [1, 2]);
    assert.ok(aborted, 'the handler saw its signal aborted');
    await raw.waitForCount(queue, 0);
  });

  describe('poison: settled on the first delivery, never handed to a handler', () => {
    const cases: { name: string; body: unknown; options?: Partial<AppOptions>; record: (r: Record<string, unknown>) => void }[] = [
      { name: 'malformed JSON', body: 'not json {', record: (r) => assert.equal(r.raw, 'not json {') },
      { name: 'identity-less object', body: '{"foo":1}', record: (r) => assert.equal(r.foo, 1) },
      { name: 'JSON array', body: '[1,2]', record: (r) => assert.equal(r.raw, '[1,2]') },
      { name: 'empty body', body: '', record: (r) => assert.equal(r.raw, '') },
      {
        name: 'invalid UTF-8 (a data section)',
        body: rhea.message.data_section(Buffer.from([0xff, 0x0e])),
        record: (r) => assert.deepEqual([r.raw, r.raw_encoding], ['/w4=', 'base64']),
      },
      {
        name: 'oversized',
        body: JSON.stringify({ job: URN, trace_id: 't', data: { pad: 'x'.repeat(200) }, meta: { schema_version: 1 }, attempts: 0 }),
        options: { maxBodyBytes: 100 },
        record: (r) => assert.equal((r.data as { pad: string }).pad.length, 200),
      },
      {
        name: 'an AMQP map value',
        body: { job: URN },
        record: (r) => {
          assert.equal(r.job, URN, 'kept as its JSON rendering');
          assert.match(String((r.dead_letter as { error: string }).error), /AMQP object value/);
        },
      },
    ];
    for (const c of cases) {
      it(`${c.name}: written to <queue>.dlq as the poison record, then accepted`, async () => {
        const { queue, dlq } = names('poison-dl');
        await raw.send(queue, foreign(c.body, { traceparent: 'tp-1' }));
        const { app: a } = app(queue, { maxAttempts: 5, deadLetter: true, ...c.options });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
        await a.close();
        assert.equal(calls, 0);
        await raw.waitForCount(queue, 0);
        const [record] = await raw.take(dlq);
        const parsed = JSON.parse(record!.body.toString('utf8'));
        assert.deepEqual([parsed.dead_letter.reason, parsed.dead_letter.attempts, parsed.dead_letter.original_queue], ['poison', 1, queue]);
        c.record(parsed);
        assert.equal(record!.message.content_type, 'application/json');
        const props = record!.message.application_properties ?? {};
        const own = projectArtemis(recordProjection(record!.body)).application_properties as Record<string, unknown>;
        for (const key of ['bq_attempts', 'bq_schema_version', 'bq_source_lang']) {
          assert.equal(props[key], own[key], `${key}: the projection of the record's own bytes, not what the delivery claimed`);
        }
        if (parsed.job === undefined) {
          assert.equal(props.bq_source_lang, undefined, 'not an envelope: the "go" the delivery claimed is not kept');
          assert.equal((record!.message.message_annotations as Record<string, unknown> | undefined)?.['x-opt-jms-type'], undefined, 'no URN either');
        }
        assert.equal(props.traceparent, 'tp-1', 'riders ride along');
      });
    }

  });

  describe('version gate on bq_schema_version', () => {
    it('a value other than "1": the raw body byte for byte in the DLQ, without the attempts and schema-version properties', async () => {
      const { queue, dlq } = names('gate-dl');
      const { body } = envelope(URN, { order_id: 9 }, queue);
      await raw.send(queue, foreign(body.toString('utf8'), { bq_schema_version: '2', bq_attempts: '4', traceparent: TP }));
      const { app: a } = app(queue, { maxAttempts: 5, deadLetter: true, onUnknownUrn: 'fail' });
      let calls = 0;
      a.handle(URN, () => void (calls += 1));
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      assert.equal(calls, 0, 'never reaches the handler');
      await raw.waitForCount(queue, 0);
      const [record] = await raw.take(dlq);
      assert.ok(record!.body.equals(body), 'byte for byte, no dead_letter block');
      assert.equal(record!.message.message_annotations?.['x-opt-jms-type'], URN);
      assert.deepEqual(record!.message.application_properties, { bq_source_lang: 'go', bq_app_id: 'babelqueue', traceparent: TP });
    });

    it('" 1 " is gated (only the exact "1" passes; nothing is trimmed)', async () => {
      const { queue, dlq } = names('gate-exact');
      const { body } = envelope(URN, {}, queue);
      await raw.send(queue, foreign(body.toString('utf8'), { bq_schema_version: ' 1 ' }));
      const { app: a } = app(queue, { deadLetter: true });
      let calls = 0;
      a.handle(URN, () => void (calls += 1));
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      assert.equal(calls, 0);
      const [record] = await raw.take(dlq);
      assert.ok(record!.body.equals(body), 'byte for byte');
    });

    it('without a DLQ: accepted, dropped and logged', async () => {
      const { queue, dlq } = names('gate-drop');
      const { body } = envelope(URN, {}, queue);
      await raw.send(queue, foreign(body.toString('utf8'), { bq_schema_version: 'x' }));
      const { app: a, logger } = app(queue, { maxAttempts: 5 });
      let calls = 0;
      a.handle(URN, () => void (calls += 1));
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      assert.equal(calls, 0);
      await raw.waitForCount(queue, 0);
      assert.equal(await raw.count(dlq), 0);
      const dropped = logger.lines.find((line) => line.message.startsWith('dropped'));
      assert.match(String(dropped?.fields.why), /unsupported native schema version "x"/);
    });

    for (const [label, value] of [
      ['string "1"', '1'],
      ['integer 1', 1],
      ['blank (absent)', '  '],
      ['null (absent)', null],
      ['absent', undefined],
    ] as const) {
      it(`${label}: decoded and handled normally`, async () => {
        const { queue } = names('gate-pass');
        const { body } = envelope(URN, {}, queue);
        const message = foreign(body.toString('utf8'), { bq_schema_version: value });
        if (value === undefined) delete (message.application_properties as Record<string, unknown>).bq_schema_version;
        await raw.send(queue, message);
        const { app: a } = app(queue, { deadLetter: true });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
        await a.close();
        assert.equal(calls, 1);
      });
    }

    it('"1" with a body whose meta.schema_version is not 1: poison, not version-gated', async () => {
      const { queue, dlq } = names('gate-body');
      const body = JSON.stringify({ job: URN, trace_id: 't', data: {}, meta: { id: 'x', schema_version: 2 }, attempts: 0 });
      await raw.send(queue, foreign(body));
      const { app: a } = app(queue, { deadLetter: true });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      const [record] = await raw.take(dlq);
      assert.equal(JSON.parse(record!.body.toString('utf8')).dead_letter.reason, 'poison');
    });
  });

  it('a failed DLQ write accepts nothing: the message is redelivered and the write retried, until it succeeds', async () => {
    const { queue, dlq } = names('dlq-fail');
    // The DLQ address refuses sends once full (address-full policy FAIL): the broker rejects the write.
    await raw.limitAddress(dlq);
    await raw.send(dlq, { body: 'x'.repeat(2048) });
    try {
      const { body, projection } = envelope(URN, { order_id: 7 }, queue);
      // Artemis gives the full DLQ address no credit: the send timeout ends each write.
      const first = app(queue, { maxAttempts: 1, deadLetter: true }, { sendTimeoutMs: 300 });
      await first.transport.publish({ body, queue, projection });
      let calls = 0;
      first.app.handle(URN, () => {
        calls += 1;
        throw new Error('always');
      });
      assert.equal(await first.app.consume({ maxMessages: 3, idleMs: 5000 }), 3);
      await first.app.close();
      assert.equal(calls, 3, 'redelivered after each failed write');
      assert.match(first.logger.text(), /dead-letter write failed/);
      assert.match(first.logger.text(), /no outcome within 300 ms|resource-limit-exceeded/);
      assert.equal(await raw.count(dlq), 1, 'only the filler');
      assert.equal(await raw.count(queue), 1, 'the original is still on the queue');

      await raw.unlimitAddress(dlq);
      await raw.take(dlq);
      const second = app(queue, { maxAttempts: 1, deadLetter: true });
      second.app.handle(URN, () => {
        throw new Error('always');
      });
      assert.equal(await second.app.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await second.app.close();
      await raw.waitForCount(queue, 0);
      const [record] = await raw.take(dlq);
      assert.equal(JSON.parse(record!.body.toString('utf8')).dead_letter.reason, 'failed');
    } finally {
      await raw.unlimitAddress(dlq);
    }
  });

  it('shutdown: a handler still running at the deadline leaves its message unsettled; the next consumer gets it', async () => {
    const { queue } = names('shutdown');
    const first = app(queue, { shutdownTimeoutMs: 100 });
    let started = false;
    first.app.handle(URN, () => {
      started = true;
      return new Promise(() => undefined);
    });
    await first.app.publish(URN, { order_id: 8 });
    const controller = new AbortController();
    const running = first.app.run({ signal: controller.signal, handleSignals: false });
    const until = Date.now() + 60_000;
    while (!started && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.ok(started, 'the handler started');
    controller.abort();
    await running;
    await first.app.close();
    assert.match(first.logger.text(), /left unsettled/);

    const second = app(queue);
    const seen: number[] = [];
    second.app.handle(URN, (_data, message) => void seen.push(message.attempts));
    assert.equal(await second.app.consume({ maxMessages: 1, idleMs: 5000 }), 1);
    await second.app.close();
    assert.deepEqual(seen, [1], 'released, not counted as a failed attempt');
  });

  it('concurrency: never more deliveries in flight than the credit granted', async () => {
    const { queue } = names('concurrency');
    const { app: a } = app(queue);
    let running = 0;
    let peak = 0;
    a.handle(URN, async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 100));
      running -= 1;
    });
    for (let i = 0; i < 9; i++) await a.publish(URN, { i });
    assert.equal(await a.consume({ concurrency: 3, maxMessages: 9, idleMs: 5000 }), 9);
    await a.close();
    assert.equal(peak, 3);
    await raw.waitForCount(queue, 0);
  });

  it('close() during consume: the in-flight delivery settles first, then the loop and the connection stop', async () => {
    const { queue } = names('close');
    const { app: a, transport } = app(queue);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    a.handle(URN, async () => {
      started = true;
      await gate;
    });
    await a.publish(URN, {});
    const consuming = a.consume({ idleMs: 60_000 });
    const until = Date.now() + 60_000;
    while (!started && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const closing = transport.close();
    release();
    await closing;
    assert.equal(await consuming, 1);
    await a.close();
    await raw.waitForCount(queue, 0);
  });
});
