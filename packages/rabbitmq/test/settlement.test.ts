import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Options } from 'amqplib';
import { createApp, withAttempts, type App, type AppOptions } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { captureLogger, envelope, Raw, rabbit, uniqueQueue } from './support/rabbit.js';

const URN = 'urn:babel:orders:created';
/** Bounds a drain that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 30_000;

/** Every settlement path, through createApp, in both consume modes. */
for (const mode of ['consume', 'get'] as const) {
  describe(`RabbitMQ settlement through the App (${mode} mode)`, { skip: rabbit.skip }, () => {
    const url = rabbit.url!;
    let raw: Raw;
    const created: string[] = [];

    before(async () => {
      raw = await Raw.open(url);
    });
    after(async () => {
      await raw.cleanup(...created);
      await raw.close();
    });
    /** Every App a test opened is closed after it, whatever its assertions did (close is idempotent). */
    const opened: App[] = [];
    afterEach(async () => {
      await Promise.allSettled(opened.splice(0).map((a) => a.close()));
    });

    /** A queue, its DLQ and delay queues, all removed after the suite. */
    function names(prefix: string) {
      const queue = uniqueQueue(`bq-rmq-${mode}-${prefix}`);
      const dlq = `${queue}.dlq`;
      created.push(queue, dlq);
      return { queue, dlq, delay: (ms: number) => (created.push(`${queue}.delay.${ms}`), `${queue}.delay.${ms}`) };
    }

    function app(queue: string, options: Partial<AppOptions> = {}) {
      const logger = captureLogger();
      const transport = new RabbitMqTransport({ url, mode, requeueDelayMs: 50, poll: { minMs: 10, maxMs: 50 }, logger });
      const instance = createApp({ transport, queue, logger, ...options });
      opened.push(instance);
      return { app: instance, transport, logger };
    }

    /** Publishes raw bytes as a foreign producer would. */
    async function publishRaw(queue: string, body: Buffer, properties: Options.Publish = {}) {
      await raw.channel.assertQueue(queue, { durable: true });
      // Confirmed, so the message is on the queue before the App looks.
      const confirm = await raw.model.createConfirmChannel();
      try {
        confirm.sendToQueue(queue, body, { persistent: true, ...properties });
        await confirm.waitForConfirms();
      } finally {
        await confirm.close();
      }
    }

    it('re-publishes a retry with attempts + 1 in the body and x-attempts, and acknowledges the original', async () => {
      const { queue } = names('retry-copy');
      const { body, projection } = envelope(URN, { order_id: 2 }, queue);
      const { app: a, transport } = app(queue, { maxAttempts: 3 });
      await transport.publish({ body, queue, projection, headers: { traceparent: 'tp-1' } });
      a.handle(URN, () => {
        throw new Error('boom');
      });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      await a.close();
      const [copy, ...rest] = await raw.drain(queue);
      assert.equal(rest.length, 0, 'the original was acknowledged: only the copy is left');
      assert.ok(copy!.content.equals(withAttempts(body, 1)), 'byte-preserving copy with attempts 1');
      assert.equal(copy!.properties.headers!['x-attempts'], 1);
      assert.equal(copy!.properties.headers!.traceparent, 'tp-1');
      assert.equal(copy!.properties.type, URN);
      assert.equal(copy!.properties.messageId, projection.messageId);
      assert.equal(copy!.properties.correlationId, projection.traceId);
      assert.equal(copy!.properties.deliveryMode, 2);
    });

    it('retries a failing handler up to maxAttempts, then dead-letters the original bytes with the counted attempt', async () => {
      const { queue, dlq } = names('exhaust');
      const { body, projection } = envelope(URN, { order_id: 3 }, queue);
      const { app: a, transport } = app(queue, { maxAttempts: 3, deadLetter: true });
      await transport.publish({ body, queue, projection });
      const attempts: number[] = [];
      a.handle(URN, (_data, message) => {
        attempts.push(message.attempts);
        throw new TypeError('gateway timeout');
      });
      assert.equal(await a.consume({ maxMessages: 3, idleMs: IDLE_MS }), 3);
      await a.close();
      assert.deepEqual(attempts, [1, 2, 3]);
      assert.equal(await raw.count(queue), 0);
      const [record] = await raw.drain(dlq);
      // The delivered envelope verbatim, attempts set to the counted attempt, plus a dead_letter member.
      const lastDelivered = withAttempts(body, 3);
      assert.ok(
        record!.content.subarray(0, lastDelivered.length - 1).equals(lastDelivered.subarray(0, -1)),
        'the record is the delivered envelope verbatim plus a dead_letter member',
      );
      const parsed = JSON.parse(record!.content.toString('utf8'));
      assert.equal(parsed.dead_letter.reason, 'failed');
      assert.equal(parsed.dead_letter.attempts, 3);
      assert.equal(parsed.dead_letter.error, 'gateway timeout');
      assert.equal(parsed.dead_letter.exception, 'TypeError');
      assert.equal(parsed.dead_letter.original_queue, queue);
      assert.equal(record!.properties.type, URN, 'the record keeps the routing properties');
      assert.equal(record!.properties.deliveryMode, 2);
    });

    it('waits the backoff in the <queue>.delay.<ms> holding queue before the next delivery', async () => {
      const { queue, delay } = names('backoff');
      const holding = delay(300);
      const { app: a } = app(queue, { maxAttempts: 2, retryBackoff: { baseMs: 300, multiplier: 1 } });
      const at: number[] = [];
      a.handle(URN, () => {
        at.push(Date.now());
        throw new Error('later');
      });
      await a.publish(URN, {});
      await a.consume({ maxMessages: 2, idleMs: IDLE_MS });
      await a.close();
      assert.equal(at.length, 2);
      // Not before the backoff; how much later depends on the machine's load, so no upper bound
      // (the holding queue's own TTL is checked below).
      const gap = at[1]! - at[0]!;
      assert.ok(gap >= 290, `redelivered after ${gap} ms`);
      assert.equal(await raw.count(holding), 0);
      // The holding queue is the one named for the delay, with its TTL and dead-letter route.
      const probe = await raw.model.createChannel();
      probe.on('error', () => undefined);
      await assert.rejects(probe.assertQueue(holding, { durable: true }), /PRECONDITION_FAILED/);
    });

    describe('poison', () => {
      const cases = [
        { name: 'not JSON', body: Buffer.from('not json {'), record: (r: Record<string, unknown>) => assert.equal(r.raw, 'not json {') },
        { name: 'identity-less object', body: Buffer.from('{"foo":1}'), record: (r: Record<string, unknown>) => assert.equal(r.foo, 1) },
        {
          name: 'invalid UTF-8',
          body: Buffer.from([0xff, 0x0e]),
          record: (r: Record<string, unknown>) => {
            assert.equal(r.raw, '/w4=');
            assert.equal(r.raw_encoding, 'base64');
          },
        },
      ];
      for (const c of cases) {
        it(`${c.name}: dead-lettered at once as a poison record when a DLQ is set`, async () => {
          const { queue, dlq } = names('poison-dl');
          await publishRaw(queue, c.body);
          const { app: a } = app(queue, { maxAttempts: 5, deadLetter: true });
          let calls = 0;
          a.handle(URN, () => void (calls += 1));
          assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
          await a.close();
          assert.equal(calls, 0);
          assert.equal(await raw.count(queue), 0);
          const [record] = await raw.drain(dlq);
          const parsed = JSON.parse(record!.content.toString('utf8'));
          assert.equal(parsed.dead_letter.reason, 'poison');
          assert.equal(parsed.dead_letter.attempts, 1);
          c.record(parsed);
          assert.equal(record!.properties.contentType, 'application/json');
        });
      }

    });

    describe('no version gate: x-schema-version is a projection (the seeds define no RabbitMQ gate; the Python SDK has none)', () => {
      const projectionHeaders = (version: unknown) => ({
        type: URN,
        appId: 'babelqueue',
        headers: { 'x-schema-version': version, 'x-source-lang': 'go', 'x-attempts': 0, traceparent: 'tp' },
      });

      // A newer producer during a rolling upgrade: its header says 2, its body is one this consumer reads.
      for (const [label, value, options] of [
        ['integer 2, dead-lettering off', 2, {}],
        ['string "2", dead-lettering off', '2', {}],
        ['" 1 ", dead-lettering on', ' 1 ', { deadLetter: true }],
        ['integer 1', 1, { deadLetter: true }],
        ['blank', '  ', {}],
        ['null', null, {}],
        ['absent', undefined, {}],
      ] as const) {
        it(`${label}: the body is decoded and handled, never dropped`, async () => {
          const { queue, dlq } = names('gate-none');
          const { body } = envelope(URN, { order_id: 9 }, queue);
          const properties = projectionHeaders(value);
          if (value === undefined) delete (properties.headers as Record<string, unknown>)['x-schema-version'];
          await publishRaw(queue, body, properties);
          const { app: a, logger } = app(queue, { maxAttempts: 5, ...options });
          let calls = 0;
          a.handle(URN, () => void (calls += 1));
          assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
          await a.close();
          assert.equal(calls, 1);
          assert.equal(await raw.count(queue), 0);
          assert.equal(await raw.count(dlq), 0);
          assert.equal(logger.lines.find((line) => line.message.startsWith('dropped')), undefined);
        });
      }

      it('the body\'s meta.schema_version still applies: a version 2 body is poison (with a DLQ, the poison record)', async () => {
        const { queue, dlq } = names('gate-body');
        const body = Buffer.from(envelope(URN, {}, queue).body.toString().replace('"schema_version":1', '"schema_version":2'));
        await publishRaw(queue, body, projectionHeaders(2));
        const { app: a } = app(queue, { deadLetter: true });
        let calls = 0;
        a.handle(URN, () => void (calls += 1));
        assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        await a.close();
        assert.equal(calls, 0);
        const [record] = await raw.drain(dlq);
        assert.equal(JSON.parse(record!.content.toString()).dead_letter.reason, 'poison');
      });
    });

    it('a failed DLQ write acknowledges nothing: the message is redelivered and the write retried', async () => {
      const { queue, dlq } = names('dlq-fail');
      // A DLQ that refuses every publish (basic.nack): the write fails on the broker.
      await raw.channel.assertQueue(dlq, { durable: true, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
      const { body, projection } = envelope(URN, { order_id: 7 }, queue);
      const first = app(queue, { maxAttempts: 1, deadLetter: true });
      await first.transport.publish({ body, queue, projection });
      let calls = 0;
      first.app.handle(URN, () => {
        calls += 1;
        throw new Error('always');
      });
      assert.equal(await first.app.consume({ maxMessages: 3, idleMs: IDLE_MS }), 3);
      await first.app.close();
      assert.equal(calls, 3, 'redelivered after each failed write');
      assert.match(first.logger.text(), /dead-letter write failed/);
      assert.equal(await raw.count(dlq), 0);
      await raw.waitForCount(queue, 1, 20_000);
      const [still] = await raw.drain(queue);
      assert.ok(still!.content.equals(body), 'nothing was acknowledged: the original is still there, unchanged');

      // Once the DLQ accepts writes again, the next delivery writes the record.
      await raw.channel.deleteQueue(dlq);
      await publishRaw(queue, still!.content, still!.properties);
      const second = app(queue, { maxAttempts: 1, deadLetter: true });
      second.app.handle(URN, () => {
        throw new Error('always');
      });
      assert.equal(await second.app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      await second.app.close();
      assert.equal(await raw.count(queue), 0);
      assert.equal(await raw.count(dlq), 1);
    });
  });
}
