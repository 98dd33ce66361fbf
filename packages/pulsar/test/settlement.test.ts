// Every settlement path through createApp on the lab's Pulsar, read back with a
// raw WebSocket consumer: ack, re-publish retries, exhaustion, unknown URNs,
// poison, the version gate, a failed DLQ write, Exclusive subscriptions. Once
// with each kind of consumer: the WebSocket API's and the binary protocol's.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createApp, withAttempts, type AppOptions } from '@babelqueue/core';
import { projectPulsar, recordProjection } from '@babelqueue/core/binding';
import { PulsarTransport, type PulsarTransportOptions } from '@babelqueue/pulsar';
import { captureLogger, envelope, lab, RawPulsar, serviceUrl, sleep, uniqueQueue } from './support/pulsar.js';
import { until } from '../../../test/support/until.js';

const URN = 'urn:babel:orders:created';

for (const consumerProtocol of ['websocket', 'binary'] as const)
describe(`Pulsar settlement through the App (${consumerProtocol} consumer)`, { skip: lab.skip }, () => {
  const url = lab.url!;
  const raw = new RawPulsar(url);
  const created: string[] = [];
  after(() => raw.cleanup(created));

  function names(label: string) {
    const queue = uniqueQueue(`bq-pulsar-${label}`);
    const dlq = `${queue}.dlq`;
    created.push(queue, dlq);
    return { queue, dlq };
  }

  function app(queue: string, options: Partial<AppOptions> = {}, transportOptions: Partial<PulsarTransportOptions> = {}) {
    const logger = captureLogger();
    const transport = new PulsarTransport({ url, serviceUrl, consumerProtocol, negativeAckRedeliveryDelayMs: 100, logger, ...transportOptions });
    return { app: createApp({ transport, queue, logger, ...options }), transport, logger };
  }

  const json = (body: Buffer) => JSON.parse(body.toString('utf8'));

  it('a retry re-publishes the bytes with attempts + 1 in the body and bq-attempts, keeps the routing properties, and acks the original', async () => {
    const { queue } = names('retry-copy');
    const { body } = await raw.publishEnvelope(queue, { order_id: 2 }, { traceparent: 'tp-1', 'bq-delay': '10' });
    const { app: a } = app(queue, { maxAttempts: 3 });
    a.handle(URN, () => {
      throw new Error('boom');
    });
    assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
    await a.close();
    await raw.waitForBacklog(queue, 1);
    const [copy] = await raw.take(queue, 1);
    assert.ok(copy!.body.equals(withAttempts(body, 1)), 'byte-preserving copy with attempts 1');
    const original = json(body);
    assert.deepEqual(copy!.properties, {
      'bq-job': URN,
      'bq-trace-id': original.trace_id,
      'bq-message-id': original.meta.id,
      'bq-schema-version': '1',
      'bq-source-lang': 'node',
      'bq-attempts': '1',
      traceparent: 'tp-1',
    });
  });

  it('exhaustion at 3: attempts 1, 2, 3, then the DLQ record with the counted attempt, routing properties kept', async () => {
    const { queue, dlq } = names('exhaust');
    const { body } = await raw.publishEnvelope(queue, { order_id: 3 }, { traceparent: 'tp-x' });
    const { app: a } = app(queue, { deadLetter: true });
    const attempts: number[] = [];
    a.handle(URN, (_data, message) => {
      attempts.push(message.attempts);
      throw new TypeError('gateway timeout');
    });
    assert.equal(await a.consume({ maxMessages: 3, idleMs: 5000 }), 3);
    await a.close();
    assert.deepEqual(attempts, [1, 2, 3]);
    await raw.waitForBacklog(queue, 0);
    const [record] = await raw.take(dlq, 1);
    const last = withAttempts(body, 3);
    assert.ok(record!.body.subarray(0, last.length - 1).equals(last.subarray(0, -1)), 'the delivered envelope verbatim plus a dead_letter member');
    const parsed = json(record!.body);
    assert.equal(parsed.attempts, 3);
    assert.deepEqual(
      { reason: parsed.dead_letter.reason, attempts: parsed.dead_letter.attempts, error: parsed.dead_letter.error, exception: parsed.dead_letter.exception, original_queue: parsed.dead_letter.original_queue, lang: parsed.dead_letter.lang },
      { reason: 'failed', attempts: 3, error: 'gateway timeout', exception: 'TypeError', original_queue: queue, lang: 'node' },
    );
    assert.equal(record!.properties['bq-job'], URN);
    assert.equal(record!.properties['bq-attempts'], '3', 'the projection agrees with the record');
    assert.equal(record!.properties['bq-message-id'], parsed.meta.id);
    assert.equal(record!.properties.traceparent, 'tp-x');
  });

  describe('a bq-job route other than the body\'s job: kept as the delivery arrived with it', () => {
    const route = 'urn:babel:orders:routed';
    const failing = (queue: string, maxAttempts: number) => {
      const { app: a } = app(queue, { maxAttempts, deadLetter: true });
      a.handle(URN, () => {
        throw new Error('boom');
      });
      return a;
    };

    it('on the retry copy', async () => {
      const { queue } = names('route-retry');
      await raw.publishEnvelope(queue, { order_id: 30 }, { 'bq-job': route });
      const a = failing(queue, 3);
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      await raw.waitForBacklog(queue, 1);
      const [copy] = await raw.take(queue, 1);
      assert.deepEqual([copy!.properties['bq-job'], copy!.properties['bq-attempts']], [route, '1']);
    });

    it('on the DLQ record', async () => {
      const { queue, dlq } = names('route-dlq');
      await raw.publishEnvelope(queue, { order_id: 31 }, { 'bq-job': route });
      const a = failing(queue, 1);
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      await raw.waitForBacklog(queue, 0);
      const [record] = await raw.take(dlq, 1);
      assert.equal(json(record!.body).dead_letter.reason, 'failed');
      assert.deepEqual([record!.properties['bq-job'], record!.properties['bq-attempts']], [route, '1']);
    });
  });

  it('Exclusive subscription: a nack does not advance the redelivery count there, yet the cap holds (the count travels in the message)', async () => {
    const { queue, dlq } = names('exclusive');
    const { app: a } = app(queue, { deadLetter: true }, { subscriptionType: 'Exclusive' });
    const seen: { attempts: number; bqAttempts: unknown }[] = [];
    a.handle(URN, (_data, message) => {
      seen.push({ attempts: message.attempts, bqAttempts: message.headers['bq-attempts'] });
      throw new Error('always');
    });
    await a.publish(URN, { order_id: 5 });
    assert.equal(await a.consume({ maxMessages: 3, idleMs: 5000 }), 3);
    await a.close();
    assert.deepEqual(seen, [
      { attempts: 1, bqAttempts: '0' },
      { attempts: 2, bqAttempts: '1' },
      { attempts: 3, bqAttempts: '2' },
    ]);
    const [record] = await raw.take(dlq, 1);
    assert.equal(json(record!.body).dead_letter.attempts, 3);
  });

  for (const subscriptionType of ['Shared', 'Exclusive'] as const) {
    it(`${subscriptionType}: a retry backoff delays the next attempt (${subscriptionType === 'Shared' ? 'deliverAfterMs on the copy' : 'Pulsar ignores delays here, so the delivery waits it out'})`, async () => {
      const { queue } = names(`backoff-${subscriptionType}`);
      // Pulsar's delayed delivery is not strict by default: a message may come
      // up to one tick (delayedDeliveryTickTimeMillis, 1000 ms) before it is due.
      const [baseMs, atLeast] = subscriptionType === 'Shared' ? [2500, 1500] : [700, 700];
      const { app: a } = app(queue, { maxAttempts: 2, retryBackoff: { baseMs, multiplier: 1 } }, { subscriptionType });
      const at: number[] = [];
      a.handle(URN, () => {
        at.push(Date.now());
        throw new Error('later');
      });
      await a.publish(URN, {});
      assert.equal(await a.consume({ maxMessages: 2, idleMs: 10_000 }), 2);
      await a.close();
      const gap = at[1]! - at[0]!;
      assert.ok(gap >= atLeast, `attempt 2 came ${gap} ms after attempt 1`);
      await raw.waitForBacklog(queue, 0);
    });
  }

  it('the unsettled path nacks: on Shared the redelivery count advances and the attempt is counted from it', async () => {
    const { queue, dlq } = names('nack-count');
    // The DLQ refuses writes, so the exhausted delivery is left unsettled (negatively acknowledged).
    await raw.terminate(dlq);
    const { body } = await raw.publishEnvelope(queue, { order_id: 7 });
    const first = app(queue, { maxAttempts: 1, deadLetter: true });
    const attempts: number[] = [];
    first.app.handle(URN, (_data, message) => {
      attempts.push(message.attempts);
      throw new Error('always');
    });
    assert.equal(await first.app.consume({ maxMessages: 3, idleMs: 10_000 }), 3);
    await first.app.close();
    assert.deepEqual(attempts, [1, 2, 3], 'max(body 0, redeliveryCount) + 1 after each nack');
    assert.match(first.logger.text(), /dead-letter write failed/);
    await raw.waitForBacklog(queue, 1);

    // The DLQ accepts writes again: the next delivery writes the record.
    await raw.cleanup([dlq]);
    const second = app(queue, { maxAttempts: 1, deadLetter: true });
    second.app.handle(URN, () => {
      throw new Error('always');
    });
    assert.equal(await second.app.consume({ maxMessages: 1, idleMs: 10_000 }), 1);
    await second.app.close();
    await raw.waitForBacklog(queue, 0);
    const [record] = await raw.take(dlq, 1);
    const parsed = json(record!.body);
    assert.equal(parsed.meta.id, json(body).meta.id, 'nothing was lost or acknowledged before the write');
    assert.equal(parsed.dead_letter.reason, 'failed');
  });

  it('a handler timeout fails the attempt: retried and handled on attempt 2', async () => {
    const { queue } = names('timeout');
    const { app: a } = app(queue, { handlerTimeoutMs: 200 });
    const attempts: number[] = [];
    a.handle(URN, async (_data, message) => {
      attempts.push(message.attempts);
      if (message.attempts === 1) await new Promise((resolve) => message.signal.addEventListener('abort', resolve));
    });
    await a.publish(URN, {});
    assert.equal(await a.consume({ maxMessages: 2, idleMs: 5000 }), 2);
    await a.close();
    assert.deepEqual(attempts, [1, 2]);
    await raw.waitForBacklog(queue, 0);
  });

  describe('unknown URN', () => {
    const NOBODY = 'urn:babel:nobody:home';

    it('release: re-published with the release delay (deliverAfterMs), then dead-lettered at the cap', async () => {
      const { queue, dlq } = names('urn-release');
      const { app: a } = app(queue, { maxAttempts: 2, deadLetter: true, onUnknownUrn: 'release', unknownUrnReleaseDelayMs: 300 });
      await a.publish(NOBODY, {});
      assert.equal(await a.consume({ maxMessages: 2, idleMs: 10_000 }), 2);
      await a.close();
      const [record] = await raw.take(dlq, 1);
      assert.equal(json(record!.body).dead_letter.reason, 'unknown_urn');
      assert.equal(record!.properties['bq-delay'], undefined, 'a record carries no delay');
    });

  });

  describe('poison', () => {
    const cases: { name: string; body: Buffer; check(record: Record<string, any>): void; maxBodyBytes?: number }[] = [
      { name: 'malformed JSON', body: Buffer.from('not json {'), check: (r) => assert.equal(r.raw, 'not json {') },
      { name: 'invalid UTF-8', body: Buffer.from([0xff, 0x0e]), check: (r) => assert.deepEqual([r.raw, r.raw_encoding], ['/w4=', 'base64']) },
      { name: 'identity-less object', body: Buffer.from('{"foo":1,"attempts":0}'), check: (r) => assert.equal(r.foo, 1) },
      { name: 'JSON array', body: Buffer.from('[1,2]'), check: (r) => assert.equal(r.raw, '[1,2]') },
      { name: 'empty body', body: Buffer.alloc(0), check: (r) => assert.equal(r.raw, '') },
      {
        name: 'oversized',
        body: envelope(URN, { blob: 'x'.repeat(400) }, 'q').body,
        maxBodyBytes: 256,
        check: (r) => assert.equal(typeof r.raw === 'string' || typeof r.job === 'string', true),
      },
    ];
    for (const c of cases) {
      it(`${c.name}: dead-lettered at once as a poison record, the handler never runs`, async () => {
        const { queue, dlq } = names('poison-dl');
        await raw.publish(queue, c.body, { 'bq-job': URN, 'bq-schema-version': '1', 'bq-attempts': '0', traceparent: 'tp-1' });
        const { app: a } = app(queue, { maxAttempts: 5, deadLetter: true, ...(c.maxBodyBytes ? { maxBodyBytes: c.maxBodyBytes } : {}) });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
        await a.close();
        assert.equal(calls, 0);
        await raw.waitForBacklog(queue, 0);
        const [record] = await raw.take(dlq, 1);
        const parsed = json(record!.body);
        assert.deepEqual([parsed.dead_letter.reason, parsed.dead_letter.attempts], ['poison', 1]);
        c.check(parsed);
        const contract = Object.fromEntries(Object.entries(record!.properties).filter(([key]) => key.startsWith('bq-')));
        assert.deepEqual(
          contract,
          { ...projectPulsar(recordProjection(record!.body)), 'bq-job': URN },
          'the projection of the record\'s own bytes, not what the delivery claimed, but the bq-job route it arrived on',
        );
        assert.equal(record!.properties.traceparent, 'tp-1', 'riders ride along');
      });
    }

    it('without a DLQ: the bounded retry (the count rides bq-attempts), then acknowledged, dropped and logged', async () => {
      const { queue, dlq } = names('poison-retry');
      const body = Buffer.from('not json {');
      await raw.publish(queue, body);
      const { app: a, logger } = app(queue, { maxAttempts: 3 });
      assert.equal(await a.consume({ maxMessages: 3, idleMs: 5000 }), 3);
      await a.close();
      await raw.waitForBacklog(queue, 0);
      assert.equal(await raw.backlog(dlq), 0);
      const retries = logger.lines.filter((l) => /^poison .*retrying$/.test(l.message)).map((l) => l.fields.attempt);
      assert.deepEqual(retries, [1, 2]);
      const dropped = logger.lines.find((l) => l.message.startsWith('dropped'));
      assert.equal(dropped?.fields.attempt, 3);
      assert.doesNotMatch(logger.text(), /not json \{/, 'the body is never logged');
    });

    it('a poison body published raw with only a bq-job property: the DLQ record keeps that route', async () => {
      const { queue, dlq } = names('poison-route');
      await raw.publish(queue, Buffer.from('not json {'), { 'bq-job': 'urn:babel:orders:routed' });
      const { app: a } = app(queue, { deadLetter: true });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      await raw.waitForBacklog(queue, 0);
      const [record] = await raw.take(dlq, 1);
      assert.equal(json(record!.body).dead_letter.reason, 'poison');
      assert.deepEqual(record!.properties, { 'bq-job': 'urn:babel:orders:routed' });
    });

    it('without a DLQ: the poison retry copy keeps the bq-job route', async () => {
      const { queue } = names('poison-retry-route');
      await raw.publish(queue, Buffer.from('not json {'), { 'bq-job': 'urn:babel:orders:routed' });
      const { app: a } = app(queue, { maxAttempts: 3 });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      await raw.waitForBacklog(queue, 1);
      const [copy] = await raw.take(queue, 1);
      assert.deepEqual(copy!.properties, { 'bq-job': 'urn:babel:orders:routed', 'bq-attempts': '1' });
    });

  });

  describe('version gate on bq-schema-version', () => {
    it('"2": settled on the first delivery as the raw body in the DLQ, routing properties kept but the counters', async () => {
      const { queue, dlq } = names('gate-dl');
      const { body } = await raw.publishEnvelope(queue, { order_id: 9 }, { 'bq-schema-version': '2', 'bq-attempts': '7', traceparent: 'tp' });
      const { app: a } = app(queue, { maxAttempts: 3, deadLetter: true });
      let calls = 0;
      a.handle(URN, () => void (calls += 1));
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.close();
      assert.equal(calls, 0, 'never reaches the handler');
      await raw.waitForBacklog(queue, 0);
      const [record] = await raw.take(dlq, 1);
      assert.ok(record!.body.equals(body), 'byte for byte, no dead_letter block');
      const original = json(body);
      assert.deepEqual(record!.properties, {
        'bq-job': URN,
        'bq-trace-id': original.trace_id,
        'bq-message-id': original.meta.id,
        'bq-source-lang': 'node',
        traceparent: 'tp',
      });
    });

    for (const [label, options] of [
      ['dead-lettering off', {}],
      ['on_unknown_urn delete', { deadLetter: true, onUnknownUrn: 'delete' }],
      ['dead_letter strategy without a DLQ', { onUnknownUrn: 'dead_letter' }],
    ] as const) {
      it(`"x" with ${label}: acknowledged, dropped and logged`, async () => {
        const { queue, dlq } = names('gate-drop');
        await raw.publishEnvelope(queue, {}, { 'bq-schema-version': 'x' });
        const { app: a, logger } = app(queue, { maxAttempts: 5, ...options });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
        await a.close();
        assert.equal(calls, 0);
        await raw.waitForBacklog(queue, 0);
        assert.equal(await raw.backlog(dlq), 0);
        const dropped = logger.lines.find((line) => line.message.startsWith('dropped'));
        assert.match(String(dropped?.fields.why), /unsupported native schema version "x"/);
      });
    }

    // Only the exact "1" passes; nothing is trimmed, and blank is ASCII whitespace only.
    for (const [label, value] of [['" 1 "', ' 1 '], ['a no-break space', '\u00a0']] as const) {
      it(`${label}: gated, the raw body in the DLQ`, async () => {
        const { queue, dlq } = names('gate-exact');
        const { body } = await raw.publishEnvelope(queue, {}, { 'bq-schema-version': value });
        const { app: a } = app(queue, { deadLetter: true });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
        await a.close();
        assert.equal(calls, 0);
        const [record] = await raw.take(dlq, 1);
        assert.ok(record!.body.equals(body), 'byte for byte, no dead_letter block');
      });
    }

    for (const [label, value] of [['"1"', '1'], ['blank (absent)', '  '], ['tab (blank)', '\t'], ['absent', undefined]] as const) {
      it(`${label}: decoded and handled normally`, async () => {
        const { queue } = names('gate-pass');
        const { body } = envelope(URN, {}, queue);
        await raw.publish(queue, body, value === undefined ? { 'bq-job': URN } : { 'bq-job': URN, 'bq-schema-version': value });
        const { app: a } = app(queue, { deadLetter: true });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
        await a.close();
        assert.equal(calls, 1);
      });
    }
  });

  it('concurrency: at most N handlers at once, every message handled', async () => {
    const { queue } = names('concurrency');
    const { app: a } = app(queue);
    for (let i = 0; i < 8; i++) await a.publish(URN, { i });
    let running = 0;
    let peak = 0;
    const seen = new Set<number>();
    a.handle(URN, async (data: any) => {
      running += 1;
      peak = Math.max(peak, running);
      // Hold until a second one runs beside this one (bounded), instead of racing a sleep against the receives.
      await until(() => peak >= 2, 20_000).catch(() => undefined);
      await sleep(50);
      seen.add(data.i);
      running -= 1;
    });
    assert.equal(await a.consume({ concurrency: 3, maxMessages: 8, idleMs: 30_000 }), 8);
    await a.close();
    assert.equal(seen.size, 8);
    assert.ok(peak <= 3 && peak >= 2, `peak concurrency ${peak}`);
    await raw.waitForBacklog(queue, 0);
  });

  it('close during consume: in-flight deliveries settle first, consume resolves, nothing is lost', async () => {
    const { queue } = names('close');
    const { app: a, transport } = app(queue);
    await a.publish(URN, { n: 1 });
    await a.publish(URN, { n: 2 });
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const handled: number[] = [];
    a.handle(URN, async (data: any) => {
      entered();
      await sleep(200);
      handled.push(data.n);
    });
    const consuming = a.consume({ idleMs: 30_000 });
    await inHandler;
    await transport.close();
    const count = await consuming;
    assert.equal(count, handled.length);
    assert.deepEqual(handled, [1]);
    await raw.waitForBacklog(queue, 1);
    const [left] = await raw.take(queue, 1);
    assert.equal(json(left!.body).data.n, 2);
  });

  it('shutdown deadline: an interrupted handler leaves its message unsettled; the next consumer gets it, counted as a first attempt', async () => {
    const { queue } = names('shutdown');
    const { app: a } = app(queue, { shutdownTimeoutMs: 100 });
    await a.publish(URN, { n: 1 });
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    a.handle(URN, async (_data, message) => {
      entered();
      await new Promise((resolve) => message.signal.addEventListener('abort', resolve));
    });
    const stop = new AbortController();
    const running = a.run({ signal: stop.signal });
    await inHandler;
    stop.abort();
    await running;
    await a.close();
    await raw.waitForBacklog(queue, 1);
    const next = app(queue);
    const attempts: number[] = [];
    next.app.handle(URN, (_data, message) => void attempts.push(message.attempts));
    assert.equal(await next.app.consume({ maxMessages: 1, idleMs: 10_000 }), 1);
    await next.app.close();
    assert.deepEqual(attempts, [1]);
  });
});
