import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EnvelopeCodec,
  EnvelopeValidator,
  SchemaValidator,
  deadLetterBlock,
  poisonRecord,
  withAttempts,
  withDeadLetter,
  withoutDeadLetter,
  type Envelope,
} from '@babelqueue/core';
import { suites, type EnvelopeCase, type Suite } from './suite.js';

/** The shared manifest words its invalid reasons as prose; these are the validator reasons they mean. */
const SHARED_REASONS: Record<string, string> = {
  'invalid-unknown-schema-version': EnvelopeValidator.REASON_UNSUPPORTED_SCHEMA_VERSION,
  'invalid-missing-urn': EnvelopeValidator.REASON_MISSING_URN,
};

function decodeWithWarnings(raw: Buffer): { env: Record<string, unknown>; pointers: string[] } {
  const pointers: string[] = [];
  const env = EnvelopeCodec.decode(raw, (_message, pointer) => pointers.push(pointer));
  return { env, pointers };
}

function validCase(suite: Suite, c: EnvelopeCase): void {
  const raw = suite.fixture(c.file);
  const expect = c.expect!;
  const { env, pointers } = decodeWithWarnings(raw);

  assert.equal(EnvelopeCodec.accepts(env), true, 'accepts()');
  assert.equal(EnvelopeValidator.check(env), null);
  assert.equal(EnvelopeCodec.urn(env), expect.urn);
  assert.deepEqual(env.data, expect.data);
  assert.equal(env.attempts, expect.attempts);
  const meta = env.meta as Record<string, unknown>;
  assert.equal(meta.lang, expect.lang);
  assert.equal(meta.schema_version, expect.schema_version);
  if (expect.dead_letter !== undefined) {
    const block = env.dead_letter as Record<string, unknown>;
    for (const [key, value] of Object.entries(expect.dead_letter)) assert.deepEqual(block[key], value, `dead_letter.${key}`);
  }
  assert.deepEqual(pointers, c.warnings ?? [], 'decode warnings');
  for (const key of EnvelopeCodec.FORBIDDEN_TOP_LEVEL_KEYS) assert.equal(key in env, false);
  for (const key of EnvelopeCodec.FORBIDDEN_META_KEYS) assert.equal(key in meta, false);

  // A re-encode carries the same message (forbidden keys stay dropped).
  const again = EnvelopeCodec.decode(EnvelopeCodec.encode(env as Envelope), () => assert.fail('re-encode produced a warning'));
  assert.deepEqual(again, env);

  // Lossless re-emit: the retry copy differs only in attempts; the DLQ record only adds dead_letter.
  const retry = EnvelopeCodec.decode(withAttempts(raw, expect.attempts + 1), () => {});
  assert.deepEqual({ ...retry, attempts: expect.attempts }, env);
  const block = deadLetterBlock({ reason: 'failed', originalQueue: 'q', attempts: expect.attempts + 1, failedAt: 1 });
  const record = withDeadLetter(raw, block);
  assert.deepEqual(EnvelopeCodec.decode(record, () => {}).dead_letter, block);
  if (!('dead_letter' in env)) assert.deepEqual(withoutDeadLetter(record), raw, 'dead_letter splice is reversible byte for byte');
}

function invalidCase(suite: Suite, c: EnvelopeCase): void {
  const raw = suite.fixture(c.file);
  const env = EnvelopeCodec.decode(raw, () => {});
  assert.equal(EnvelopeCodec.accepts(env), false, 'accepts()');
  const reason = EnvelopeValidator.check(env);
  assert.notEqual(reason, null);
  const expected = c.validator_reason ?? SHARED_REASONS[c.name];
  if (expected !== undefined) assert.equal(reason, expected);
  assert.throws(() => EnvelopeValidator.validate(env), { name: 'InvalidEnvelopeError', reason });

  // Poison: the record keeps every original member, in order, plus dead_letter.
  const record = poisonRecord(raw, { originalQueue: 'q', attempts: 1, error: 'rejected', failedAt: 2 });
  const parsed = JSON.parse(record.toString('utf8')) as Record<string, unknown>;
  assert.equal((parsed.dead_letter as Record<string, unknown>).reason, 'poison');
  assert.deepEqual(withoutDeadLetter(record), raw);
}

for (const { suite, name, skip } of suites) {
  describe(`conformance envelope cases: ${name}`, { skip }, () => {
    for (const c of suite?.manifest.cases ?? []) {
      test(`${c.name} (${c.valid ? 'valid' : 'invalid'})`, () => {
        if (c.valid) validCase(suite!, c);
        else invalidCase(suite!, c);
        const parsed = JSON.parse(suite!.fixture(c.file).toString('utf8')) as Record<string, unknown>;
        if (c.schema_check !== undefined) {
          assert.equal(SchemaValidator.check(parsed), c.schema_check, 'SchemaValidator.check');
        } else if (c.valid) {
          // The producer schema requires `job`: the alias-only fixture is meant to fail it.
          assert.equal(SchemaValidator.isValid(parsed), typeof parsed.job === 'string', 'SchemaValidator.isValid');
        } else {
          assert.equal(SchemaValidator.isValid(parsed), false, 'SchemaValidator.isValid');
        }
      });
    }
  });
}
