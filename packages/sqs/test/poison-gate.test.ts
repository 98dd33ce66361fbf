import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, type AppOptions } from '@babelqueue/core';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { envelope, Raw, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 30_000;

/**
 * Poison and the version gate are settled on the first delivery (seed 000,
 * "Amazon SQS"): never handed to a handler, never retried by the SDK.
 */
describe('SQS poison and the version gate', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  function app(queue: string, options: Partial<AppOptions> = {}, visibilityTimeoutSeconds = 30) {
    const { transport: t, logger } = transport({ visibilityTimeoutSeconds });
    const a = createApp({ transport: t, queue, logger, ...options });
    const calls: unknown[] = [];
    a.handle(URN, (data) => void calls.push(data));
    return { app: a, logger, calls };
  }

  const gate = (value: string, dataType = 'String'): Record<string, MessageAttributeValue> => ({
    'bq-job': { DataType: 'String', StringValue: URN },
    'bq-schema-version': { DataType: dataType, StringValue: value },
    'bq-source-lang': { DataType: 'String', StringValue: 'go' },
    traceparent: { DataType: 'String', StringValue: 'tp' },
  });

  describe('poison', () => {
    const cases: { name: string; body: string; maxBodyBytes?: number; record: (r: any) => void }[] = [
      { name: 'malformed JSON', body: 'not json {', record: (r) => assert.equal(r.raw, 'not json {') },
      { name: 'identity-less object', body: '{"foo":1,"data":{}}', record: (r) => assert.deepEqual([r.foo, r.data], [1, {}]) },
      { name: 'JSON array', body: '[1,2]', record: (r) => assert.equal(r.raw, '[1,2]') },
      { name: 'JSON scalar', body: '42', record: (r) => assert.equal(r.raw, '42') },
      {
        name: 'oversized (maxBodyBytes)',
        body: JSON.stringify({ job: URN, trace_id: 't', data: { blob: 'x'.repeat(300) }, meta: { id: 'i', queue: 'q', lang: 'go', schema_version: 1, created_at: 1 }, attempts: 0 }),
        maxBodyBytes: 100,
        record: (r) => {
          assert.equal(r.job, URN, 'an object body keeps its members');
          assert.match(r.dead_letter.error, /^body of \d+ bytes exceeds the 100-byte limit$/);
        },
      },
    ];
    for (const c of cases) {
      it(`${c.name}: written to <queue>-dlq at once as a poison record, the original deleted`, async () => {
        const q = await raw.fresh('poison-dl', { dlq: true });
        await raw.send(q.url, c.body);
        const { app: a, calls } = app(q.name, { maxAttempts: 5, deadLetter: true, ...(c.maxBodyBytes ? { maxBodyBytes: c.maxBodyBytes } : {}) });
        assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        await a.close();
        assert.equal(calls.length, 0, 'never handed to a handler');
        assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
        const [record] = await raw.drain(q.dlqUrl!);
        const parsed = JSON.parse(record!.Body!);
        assert.equal(parsed.dead_letter.reason, 'poison');
        assert.equal(parsed.dead_letter.attempts, 1);
        assert.equal(parsed.dead_letter.original_queue, q.name);
        c.record(parsed);
      });
    }

    it('on_unknown_urn delete: deleted and dropped, even with a DLQ', async () => {
      const q = await raw.fresh('poison-delete', { dlq: true });
      await raw.send(q.url, 'not json {');
      const { app: a } = app(q.name, { deadLetter: true, onUnknownUrn: 'delete' });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      await a.close();
      assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
      assert.equal((await raw.counts(q.dlqUrl!)).visible, 0);
    });

    it('dead-lettering off: left to SQS (not deleted, reported), redelivered, and moved by the RedrivePolicy', async () => {
      const q = await raw.withRedrive('poison-native', 2);
      await raw.send(q.url, 'not json {');
      const { app: a, logger, calls } = app(q.name, { maxAttempts: 5 }, 1);
      // Two deliveries (each left to its 1 s visibility timeout); the third receive finds it moved.
      assert.equal(await a.consume({ idleMs: 3000 }), 2);
      await a.close();
      assert.equal(calls.length, 0);
      const lines = logger.lines.filter((l) => l.message === "left to the broker's native dead-letter handling");
      assert.equal(lines.length, 2, 'reported on every delivery');
      assert.match(String(lines[0]!.fields.why), /poison \(body is not valid JSON\); dead-lettering is off/);
      assert.doesNotMatch(logger.text(), /not json \{/, 'the body is never logged');
      const [moved] = await raw.drain(q.nativeUrl);
      assert.equal(moved!.Body, 'not json {', 'in the native dead-letter queue, byte for byte');
    });
  });

  describe('version gate (bq-schema-version)', () => {
    it('a value other than 1 with a DLQ: the raw body byte for byte, no dead_letter block, without bq-schema-version; the original deleted', async () => {
      const q = await raw.fresh('gate-dl', { dlq: true });
      const { body } = envelope(URN, { order_id: 9 }, q.name);
      await raw.send(q.url, body.toString(), gate('2'));
      const { app: a, calls } = app(q.name, { maxAttempts: 5, deadLetter: true, onUnknownUrn: 'fail' });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      await a.close();
      assert.equal(calls.length, 0, 'never reaches the handler');
      assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
      const [record] = await raw.drain(q.dlqUrl!);
      assert.equal(record!.Body, body.toString());
      assert.deepEqual(Object.keys(record!.MessageAttributes!).sort(), ['bq-job', 'bq-source-lang', 'traceparent']);
    });

    // Only the exact "1" passes: nothing is trimmed (the Python SDK reads it the same way).
    it('" 1 " is gated: the raw body in the DLQ, no handler', async () => {
      const q = await raw.fresh('gate-exact', { dlq: true });
      const { body } = envelope(URN, {}, q.name);
      await raw.send(q.url, body.toString(), gate(' 1 '));
      const { app: a, calls } = app(q.name, { deadLetter: true });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      await a.close();
      assert.equal(calls.length, 0);
      assert.equal((await raw.drain(q.dlqUrl!))[0]!.Body, body.toString());
    });

    it('a gated value is settled on the first delivery even when the body is poison (the body is not decoded)', async () => {
      const q = await raw.fresh('gate-poison', { dlq: true });
      await raw.send(q.url, 'not json {', gate('v2'));
      const { app: a } = app(q.name, { deadLetter: true });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      await a.close();
      assert.equal((await raw.drain(q.dlqUrl!))[0]!.Body, 'not json {', 'the raw body, not a poison record');
    });

    it('dead-lettering off: left to SQS and reported; the RedrivePolicy moves it', async () => {
      const q = await raw.withRedrive('gate-native', 1);
      const { body } = envelope(URN, {}, q.name);
      await raw.send(q.url, body.toString(), gate('2'));
      const { app: a, logger, calls } = app(q.name, { maxAttempts: 5 }, 1);
      assert.equal(await a.consume({ idleMs: 2500 }), 1);
      await a.close();
      assert.equal(calls.length, 0);
      const line = logger.lines.find((l) => l.message === "left to the broker's native dead-letter handling");
      assert.match(String(line?.fields.why), /unsupported native schema version "2"; dead-lettering is off/);
      const [moved] = await raw.drain(q.nativeUrl);
      assert.equal(moved!.Body, body.toString());
    });

    it('on_unknown_urn delete: deleted and dropped', async () => {
      const q = await raw.fresh('gate-delete', { dlq: true });
      await raw.send(q.url, envelope(URN, {}, q.name).body.toString(), gate('2'));
      const { app: a, calls } = app(q.name, { deadLetter: true, onUnknownUrn: 'delete' });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
      await a.close();
      assert.equal(calls.length, 0);
      assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
      assert.equal((await raw.counts(q.dlqUrl!)).visible, 0);
    });

    for (const [label, attributes] of [
      ['Number "1" (as we send it)', gate('1', 'Number')],
      ['String "1"', gate('1')],
      ['absent', { 'bq-job': { DataType: 'String', StringValue: URN } }],
    ] as const) {
      it(`${label}: decoded and handled normally`, async () => {
        const q = await raw.fresh('gate-pass');
        await raw.send(q.url, envelope(URN, { ok: true }, q.name).body.toString(), attributes);
        const { app: a, calls } = app(q.name, { deadLetter: true });
        await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
        await a.close();
        assert.deepEqual(calls, [{ ok: true }]);
      });
    }

    it('"1" still goes through the body\'s meta.schema_version check: a body with version 2 is poison', async () => {
      const q = await raw.fresh('gate-body', { dlq: true });
      const body = envelope(URN, {}, q.name).body.toString().replace('"schema_version":1', '"schema_version":2');
      await raw.send(q.url, body, gate('1', 'Number'));
      const { app: a, calls } = app(q.name, { deadLetter: true });
      await a.consume({ maxMessages: 1, idleMs: IDLE_MS });
      await a.close();
      assert.equal(calls.length, 0);
      assert.equal(JSON.parse((await raw.drain(q.dlqUrl!))[0]!.Body!).dead_letter.reason, 'poison');
    });
  });

  describe('RedrivePolicy advice', () => {
    const advice = <T extends { message: string }>(lines: T[]) => lines.filter((l) => l.message.includes('has no RedrivePolicy and dead-lettering is off'));

    it('dead-lettering off on a queue without a RedrivePolicy: warned once, when consuming starts', async () => {
      const q = await raw.fresh('no-redrive', { dlq: true });
      const { app: a, logger } = app(q.name);
      await a.consume({ idleMs: 500 });
      await a.consume({ idleMs: 500 });
      await a.close();
      const lines = advice(logger.lines);
      assert.equal(lines.length, 1, 'once, not at every consume');
      assert.equal(lines[0]!.level, 'warn');
      assert.equal(lines[0]!.fields.queue, q.name);
      assert.match(lines[0]!.message, new RegExp(`^SQS queue ${q.name} has no RedrivePolicy .* redelivers it until the queue's retention period ends; configure a RedrivePolicy .* on every consumed queue, or pass deadLetter: true$`));
    });

    it('not said when the queue has a RedrivePolicy, nor when dead-lettering is on', async () => {
      const redriven = await raw.withRedrive('has-redrive', 3);
      const first = app(redriven.name);
      await first.app.consume({ idleMs: 500 });
      await first.app.close();
      assert.deepEqual(advice(first.logger.lines), [], 'a RedrivePolicy');

      const q = await raw.fresh('dl-on', { dlq: true });
      const second = app(q.name, { deadLetter: true });
      await second.app.consume({ idleMs: 500 });
      await second.app.close();
      assert.deepEqual(advice(second.logger.lines), [], 'dead-lettering on');
      assert.ok(second.logger.lines.some((l) => l.message.startsWith(`consuming ${q.name}`)), 'it did consume');
    });
  });
});
