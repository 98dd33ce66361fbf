/**
 * Projection agreement: on every binding, the native metadata of a record the
 * binding re-emits (a retry copy, a dead-letter record) says what the
 * record's body says (seed 000: native metadata is a redundant projection of
 * the body, never a replacement for it). One row per binding under `rows/`;
 * each runs real failing handlers on its real broker and reads the copies
 * back with the broker's own client.
 *
 * What each kind of record must carry:
 * - retry copy and failed / unknown_urn record (an accepted envelope): the
 *   binding's projection of the record itself, so the attempts field says the
 *   counted attempt the body says, whatever the delivery's metadata said;
 *   a binding that retries in place (SQS) writes no copy: the released
 *   message must be the delivery untouched;
 * - poison record: what the record says; it is not an envelope, so no
 *   envelope field (only the binding's constants), but the route a binding
 *   keeps as the delivery arrived with it (Pulsar's `bq-job`);
 * - version-gated record: the raw body byte for byte with the delivery's
 *   metadata, less the attempts and schema-version fields (the Pulsar rule,
 *   seed 002 / FACTS §3), since the body was never decoded;
 * - poison on the bounded retry (no DLQ): the body unchanged, its metadata as
 *   received with the attempts field set to the counted attempt.
 * Riders (traceparent, …) ride along on every copy.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createApp, dlqName, EnvelopeCodec, silentLogger, withAttempts, type App, type AppOptions } from '@babelqueue/core';
import { type BindingRules } from '@babelqueue/core/binding';
import { bodySays, without } from './expected.js';
import type { AgreementLab, AgreementRow, NativeRecord } from './row.js';

const rowsDir = join(import.meta.dirname, 'rows');
const rows: AgreementRow[] = [];
for (const file of readdirSync(rowsDir).filter((f) => f.endsWith('.ts')).sort()) {
  rows.push(((await import(join(rowsDir, file))) as { row: AgreementRow }).row);
}

const URN = 'urn:babel:agreement:checked';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const RIDERS = { traceparent: TRACEPARENT };
/** Bounds every drain: a consume returns as soon as its message was handled. */
const IDLE_MS = 30_000;

function envelope(queue: string, attempts = 0): Buffer {
  const env = EnvelopeCodec.make(URN, { order_id: 1042, big: 1 }, { queue });
  return Buffer.from(EnvelopeCodec.encode({ ...env, attempts }), 'utf8');
}

function json(body: Buffer | null): Record<string, unknown> {
  assert.ok(body !== null, 'the record has a body');
  return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
}

for (const row of rows) {
  describe(`projection agreement [${row.binding}]`, { skip: row.skip }, () => {
    let lab: AgreementLab;
    let rules: BindingRules;
    before(async () => {
      lab = await row.open();
      const transport = lab.transport();
      rules = transport.rules;
      await transport.close();
    });
    /** The binding's DLQ of `queue` (`<queue>.dlq`; SQS `<queue>-dlq`). */
    const dlqOf = (queue: string) => (rules.dlqName ? rules.dlqName(queue, undefined) : dlqName(queue));
    after(async () => {
      await lab?.close();
    });

    /** Runs `body` with an App on `queue` that always fails, closing it whatever happens. */
    async function withApp(queue: string, options: Partial<AppOptions>, body: (app: App) => Promise<void>) {
      const app = createApp({ transport: lab.transport(), queue, logger: silentLogger, ...options });
      app.handle(URN, () => {
        throw new Error('agreement: always fails');
      });
      try {
        await body(app);
      } finally {
        await app.close();
      }
    }

    const agrees = (record: NativeRecord, expected: Record<string, unknown>, what: string) =>
      assert.deepEqual(record.contract, expected, `${what}: every projected field says what the body says`);

    it('a failing handler: the retry copy, then the dead-letter record, project their own bodies (counted attempts)', async () => {
      const queue = await lab.queue('failed');
      const original = envelope(queue);
      // On an in-place retry the row's own read of the released message is a counted delivery (SQS has no peek).
      const maxAttempts = row.retryInPlace ? 3 : 2;
      // The delivery's metadata is the producer's (attempts 0); the copies must not keep it.
      await lab.produce(queue, original, { riders: RIDERS });
      await withApp(queue, { maxAttempts, deadLetter: true, ...row.retryOptions }, async (app) => {
        assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        const copy = await lab.readRetry(queue);
        if (row.retryInPlace) {
          assert.deepEqual(copy.body, original, `released in place (${row.retryInPlace}): the delivery itself, byte for byte`);
          agrees(copy, lab.project(original, 'retry', queue), 'released message: the producer\'s metadata, untouched');
        } else {
          assert.deepEqual(copy.body, withAttempts(original, 1), 'the retry copy: the original bytes with attempts 1');
          agrees(copy, lab.project(copy.body!, 'retry', queue), 'retry copy');
          if (row.fields.attempts) assert.equal(String(copy.contract[row.fields.attempts]), '1');
        }
        assert.deepEqual(copy.riders, RIDERS, 'riders ride on the retry copy');

        assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        const record = await lab.readDeadLetter(dlqOf(queue));
        const says = json(record.body);
        assert.equal(says.attempts, maxAttempts, 'the record carries the counted attempt');
        assert.equal((says.dead_letter as Record<string, unknown>).attempts, maxAttempts);
        agrees(record, lab.project(record.body!, 'dead-letter', queue), 'failed record');
        if (row.fields.attempts) assert.equal(String(record.contract[row.fields.attempts]), String(maxAttempts), 'not the delivered count');
        if (row.ridersOnDeadLetter) assert.deepEqual(record.riders, RIDERS, 'riders ride on the record');
      });
    });

    it('an unknown URN under dead_letter: the record projects the counted attempt, not the delivered one', async () => {
      const queue = await lab.queue('unknown');
      const env = EnvelopeCodec.make('urn:babel:agreement:nobody', {}, { queue });
      const original = Buffer.from(EnvelopeCodec.encode(env), 'utf8');
      await lab.produce(queue, original, { riders: RIDERS });
      await withApp(queue, { onUnknownUrn: 'dead_letter', deadLetter: true }, async (app) => {
        assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        const record = await lab.readDeadLetter(dlqOf(queue));
        assert.equal(json(record.body).attempts, 1);
        agrees(record, lab.project(record.body!, 'dead-letter', queue), 'unknown_urn record');
      });
    });

    it('a poison body: the poison record carries no envelope field, whatever the delivery claimed (but a kept route)', async () => {
      const queue = await lab.queue('poison');
      const poison = Buffer.from('{"hello":"world","attempts":5}', 'utf8');
      // A broken producer: its metadata describes an envelope the body is not.
      const claims = envelope(queue);
      await lab.produce(queue, poison, { claims, riders: RIDERS });
      const route = row.fields.route === undefined ? {} : { [row.fields.route]: lab.project(claims, 'dead-letter', queue)[row.fields.route] };
      await withApp(queue, { deadLetter: true }, async (app) => {
        assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        const record = await lab.readDeadLetter(dlqOf(queue));
        assert.equal((json(record.body).dead_letter as Record<string, unknown>).reason, 'poison');
        assert.equal(bodySays(record.body).urn, '', 'the record is not an envelope');
        agrees(record, { ...lab.project(record.body!, 'dead-letter', queue), ...route }, 'poison record');
        if (row.ridersOnDeadLetter) assert.deepEqual(record.riders, RIDERS);
      });
    });

    it('the row declares the binding\'s poison rule', async () => {
      const transport = lab.transport();
      try {
        assert.equal(transport.rules.poisonWithoutDeadLetter === 'bounded-retry', row.poisonRetry);
      } finally {
        await transport.close();
      }
    });

    // Scenarios a binding does not have (no native version gate, no poison retry) are not registered.
    if (row.versionGate) it('a version-gated message: the raw body byte for byte, the delivery\'s metadata less attempts and schema version', async () => {
      const queue = await lab.queue('gated');
      const original = envelope(queue, 4);
      await lab.produce(queue, original, { schemaVersion: '2', riders: RIDERS });
      await withApp(queue, { deadLetter: true }, async (app) => {
        assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        const record = await lab.readDeadLetter(dlqOf(queue));
        assert.deepEqual(record.body, original, 'the raw body, byte for byte');
        const received = lab.project(original, 'dead-letter', queue);
        agrees(record, without(received, row.fields.attempts, row.fields.schemaVersion), 'version-gated record');
        assert.deepEqual(record.riders, RIDERS);
      });
    });

    if (row.poisonRetry) it('poison without a DLQ on the bounded retry: the copy keeps the body and its metadata, the attempts field counts', async () => {
      const queue = await lab.queue('poison-retry');
      const poison = Buffer.from('not json at all', 'utf8');
      const claims = envelope(queue);
      await lab.produce(queue, poison, { claims, riders: RIDERS });
      await withApp(queue, { maxAttempts: 3, ...row.retryOptions }, async (app) => {
        assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
        const copy = await lab.readRetry(queue);
        assert.deepEqual(copy.body, poison, 'poison travels unchanged');
        agrees(copy, lab.project(withAttempts(claims, 1), 'retry', queue), 'poison retry copy');
        assert.deepEqual(copy.riders, RIDERS);
      });
    });
  });
}
