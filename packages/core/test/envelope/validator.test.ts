import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeValidator, InvalidEnvelopeError } from '@babelqueue/core';

const VALID = {
  job: 'urn:babel:orders:created',
  trace_id: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  data: {},
  meta: { schema_version: 1 },
  attempts: 0,
};

describe('EnvelopeValidator', () => {
  test('reason constants carry the spec strings', () => {
    assert.equal(EnvelopeValidator.REASON_MISSING_URN, 'missing_urn');
    assert.equal(EnvelopeValidator.REASON_MISSING_META, 'missing_meta');
    assert.equal(EnvelopeValidator.REASON_UNSUPPORTED_SCHEMA_VERSION, 'unsupported_schema_version');
    assert.equal(EnvelopeValidator.REASON_INVALID_DATA, 'invalid_data');
    assert.equal(EnvelopeValidator.REASON_MISSING_TRACE_ID, 'missing_trace_id');
    assert.equal(EnvelopeValidator.REASON_INVALID_ATTEMPTS, 'invalid_attempts');
  });

  // Each row breaks one more rule than the next: the first failure in the spec's order wins.
  const rows: [unknown, string | null][] = [
    [{}, 'missing_urn'],
    ['not an object', 'missing_urn'],
    [{ job: 'x' }, 'missing_meta'],
    [{ job: 'x', meta: [] }, 'missing_meta'],
    [{ job: 'x', meta: { schema_version: 2 } }, 'unsupported_schema_version'],
    [{ job: 'x', meta: { schema_version: 1 } }, 'invalid_data'],
    [{ job: 'x', meta: { schema_version: 1 }, data: [] }, 'invalid_data'],
    [{ job: 'x', meta: { schema_version: 1 }, data: {} }, 'missing_trace_id'],
    [{ job: 'x', meta: { schema_version: 1 }, data: {}, trace_id: '  ' }, 'missing_trace_id'],
    [{ job: 'x', meta: { schema_version: 1 }, data: {}, trace_id: 't' }, 'invalid_attempts'],
    [{ job: 'x', meta: { schema_version: 1 }, data: {}, trace_id: 't', attempts: 1.5 }, 'invalid_attempts'],
    [{ ...VALID, job: undefined, urn: 'urn:a:b' }, null],
    [VALID, null],
  ];
  for (const [env, reason] of rows) {
    test(`check(${JSON.stringify(env)}) → ${reason}`, () => {
      assert.equal(EnvelopeValidator.check(env), reason);
      assert.equal(EnvelopeValidator.isValid(env), reason === null);
    });
  }

  test('validate throws InvalidEnvelopeError carrying the reason and the envelope', () => {
    const env = { ...VALID, attempts: 'x' };
    assert.throws(
      () => EnvelopeValidator.validate(env),
      (err: unknown) => err instanceof InvalidEnvelopeError && err.reason === 'invalid_attempts' && err.envelope === env,
    );
    assert.doesNotThrow(() => EnvelopeValidator.validate(VALID));
  });

  test('isUnsupportedSchemaVersion: true when meta is missing or the version is not 1', () => {
    assert.equal(EnvelopeValidator.isUnsupportedSchemaVersion(VALID), false);
    assert.equal(EnvelopeValidator.isUnsupportedSchemaVersion({ meta: { schema_version: 2 } }), true);
    assert.equal(EnvelopeValidator.isUnsupportedSchemaVersion({ meta: { schema_version: '1' } }), true);
    assert.equal(EnvelopeValidator.isUnsupportedSchemaVersion({ job: 'x' }), true);
    assert.equal(EnvelopeValidator.isUnsupportedSchemaVersion(null), true);
  });
});
