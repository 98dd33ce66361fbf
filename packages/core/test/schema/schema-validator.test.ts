import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvelopeCodec, SchemaValidator, SchemaViolationError } from '@babelqueue/core';
import { repoRoot } from '../support/paths.js';

const core = join(repoRoot, 'packages/core');
const VALID = {
  job: 'urn:babel:orders:created',
  trace_id: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  data: { order_id: 1042 },
  meta: { id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', queue: 'orders', lang: 'php', schema_version: 1, created_at: 1749132727000 },
  attempts: 0,
};
const DL = { reason: 'failed', error: null, exception: null, failed_at: 1, original_queue: 'orders', attempts: 3, lang: 'node' };
const with_ = (patch: Record<string, unknown>) => ({ ...VALID, ...patch });
const withMeta = (patch: Record<string, unknown>) => with_({ meta: { ...VALID.meta, ...patch } });
const without = (key: string) => Object.fromEntries(Object.entries(VALID).filter(([k]) => k !== key));
const withoutMeta = (key: string) => with_({ meta: Object.fromEntries(Object.entries(VALID.meta).filter(([k]) => k !== key)) });

describe('SchemaValidator', () => {
  const rows: [string, unknown, string | null][] = [
    ['a valid envelope', VALID, null],
    ['upper-case UUIDs', with_({ trace_id: VALID.trace_id.toUpperCase() }), null],
    ['unknown fields', with_({ extra: 1, meta: { ...VALID.meta, more: [1] } }), null],
    ['a valid dead_letter block', with_({ dead_letter: DL }), null],
    ['not an object (root pointer is "")', [VALID], ': not_an_object'],
    ['null', null, ': not_an_object'],
    ['missing job', without('job'), '/job: missing_required'],
    ['missing trace_id', without('trace_id'), '/trace_id: missing_required'],
    ['missing attempts', without('attempts'), '/attempts: missing_required'],
    ['empty job', with_({ job: '' }), '/job: empty_string'],
    ['job not a string', with_({ job: 5 }), '/job: wrong_type'],
    ['empty urn alias', with_({ urn: '' }), '/urn: empty_string'],
    ['a non-UUID trace id', with_({ trace_id: 'trace-123' }), '/trace_id: not_a_uuid'],
    ['data a list', with_({ data: [] }), '/data: not_an_object'],
    ['meta null', with_({ meta: null }), '/meta: not_an_object'],
    ['missing meta.id', withoutMeta('id'), '/meta/id: missing_required'],
    ['missing meta.created_at', withoutMeta('created_at'), '/meta/created_at: missing_required'],
    ['meta.id not a UUID', withMeta({ id: 'x' }), '/meta/id: not_a_uuid'],
    ['empty queue', withMeta({ queue: '' }), '/meta/queue: empty_string'],
    ['lang typescript', withMeta({ lang: 'typescript' }), '/meta/lang: not_in_enum'],
    ['schema_version 2', withMeta({ schema_version: 2 }), '/meta/schema_version: wrong_const'],
    ['schema_version "1"', withMeta({ schema_version: '1' }), '/meta/schema_version: wrong_type'],
    ['created_at negative', withMeta({ created_at: -1 }), '/meta/created_at: below_minimum'],
    ['created_at fractional', withMeta({ created_at: 1.5 }), '/meta/created_at: wrong_type'],
    ['attempts negative', with_({ attempts: -1 }), '/attempts: below_minimum'],
    ['attempts a boolean', with_({ attempts: false }), '/attempts: wrong_type'],
    ['dead_letter not an object', with_({ dead_letter: 'x' }), '/dead_letter: not_an_object'],
    ['dead_letter missing failed_at', with_({ dead_letter: { ...DL, failed_at: undefined } }), '/dead_letter/failed_at: missing_required'],
    ['dead_letter unknown reason', with_({ dead_letter: { ...DL, reason: 'expired' } }), '/dead_letter/reason: not_in_enum'],
    ['dead_letter error a number', with_({ dead_letter: { ...DL, error: 5 } }), '/dead_letter/error: wrong_type'],
  ];
  for (const [what, env, expected] of rows) {
    test(`${what} → ${expected}`, () => {
      assert.equal(SchemaValidator.check(env), expected);
      assert.equal(SchemaValidator.isValid(env), expected === null);
      if (expected === null) {
        assert.doesNotThrow(() => SchemaValidator.validate(env));
        assert.equal(SchemaValidator.violation(env), null);
      } else {
        const [pointer, reason] = expected.split(': ');
        assert.deepEqual(SchemaValidator.violation(env), { pointer, reason });
        assert.throws(
          () => SchemaValidator.validate(env),
          (err: unknown) => err instanceof SchemaViolationError && err.pointer === pointer && err.reason === reason,
        );
      }
    });
  }

  test('what make() produces is valid', () => {
    assert.equal(SchemaValidator.check(EnvelopeCodec.make('urn:babel:orders:created', { a: 1 }, { queue: 'orders' })), null);
  });
});

describe('the compiled schema module', () => {
  test('is what scripts/generate.mjs produces from schema/message-envelope.schema.json (not stale)', () => {
    assert.doesNotThrow(() => execFileSync(process.execPath, [join(core, 'scripts/generate.mjs'), '--check'], { stdio: 'pipe', timeout: 60_000 }));
  });

  test('embeds the bundled schema and needs no runtime module', () => {
    const file = readFileSync(join(core, 'src/schema/envelope-schema.generated.ts'), 'utf8');
    assert.doesNotMatch(file, /\brequire\s*\(|^\s*import\b/m);
    assert.deepEqual(SchemaValidator.schema, JSON.parse(readFileSync(join(core, 'schema/message-envelope.schema.json'), 'utf8')));
  });
});
