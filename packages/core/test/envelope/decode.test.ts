import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec } from '@babelqueue/core';

const VALID = {
  job: 'urn:babel:orders:created',
  trace_id: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  data: { order_id: 1042 },
  meta: { id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', queue: 'orders', lang: 'php', schema_version: 1, created_at: 1749132727000 },
  attempts: 0,
};
const json = (value: unknown) => JSON.stringify(value);
const with_ = (patch: Record<string, unknown>) => ({ ...VALID, ...patch });
const withMeta = (patch: Record<string, unknown>) => ({ ...VALID, meta: { ...VALID.meta, ...patch } });

function collect(raw: string | Uint8Array) {
  const warnings: { message: string; pointer: string }[] = [];
  const env = EnvelopeCodec.decode(raw, (message, pointer) => warnings.push({ message, pointer }));
  return { env, warnings };
}

afterEach(() => EnvelopeCodec.setWarningHandler(null));

describe('EnvelopeCodec.decode', () => {
  test('a valid body decodes to its object, from a string or from bytes', () => {
    assert.deepEqual(EnvelopeCodec.decode(json(VALID)), VALID);
    assert.deepEqual(EnvelopeCodec.decode(Buffer.from(json(VALID))), VALID);
    assert.deepEqual(EnvelopeCodec.decode(new TextEncoder().encode(json(VALID))), VALID);
  });

  const empty: [string, string | Uint8Array][] = [
    ['malformed JSON', '{"job":'],
    ['an empty body', ''],
    ['a JSON array', '[{"job":"x"}]'],
    ['a JSON string', '"{}"'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['JSON true', 'true'],
    ['a UTF-8 BOM before the object', `\ufeff${json(VALID)}`],
    ['invalid UTF-8 bytes', Buffer.concat([Buffer.from(json(VALID).slice(0, -2)), Buffer.from([0xff]), Buffer.from('}')])],
    ['a lone surrogate encoded as bytes', Buffer.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d])],
  ];
  for (const [what, raw] of empty) {
    test(`${what} gives the empty result`, () => {
      const { env, warnings } = collect(raw);
      assert.deepEqual(env, {});
      assert.equal(EnvelopeCodec.accepts(env), false);
      assert.deepEqual(warnings, []);
    });
  }

  test('forbidden keys are dropped, one warning each naming its JSON pointer', () => {
    const body = json({ ...withMeta({ max_retries: 3, attempts: 2, source: 's', ts: 1 }), timestamp: 5 });
    const { env, warnings } = collect(body);
    assert.deepEqual(env, VALID);
    assert.deepEqual(
      warnings.map((w) => w.pointer),
      ['/timestamp', '/meta/max_retries', '/meta/attempts', '/meta/source', '/meta/ts'],
    );
    for (const w of warnings) assert.ok(w.message.includes(w.pointer), w.message);
    assert.ok(EnvelopeCodec.accepts(env), "EnvelopeCodec.accepts(env)");
    assert.ok(!EnvelopeCodec.encode(env).includes('timestamp'), 'a re-encode never carries a forbidden key');
  });

  test('warnings never quote the body', () => {
    const secret = 'card-4111111111111111';
    const { warnings } = collect(json({ ...with_({ data: [secret] }), timestamp: secret }));
    for (const w of warnings) assert.ok(!w.message.includes(secret), "!w.message.includes(secret)");
  });

  test('the forbidden-key lists', () => {
    assert.deepEqual([...EnvelopeCodec.FORBIDDEN_TOP_LEVEL_KEYS], ['timestamp']);
    assert.deepEqual([...EnvelopeCodec.FORBIDDEN_META_KEYS], ['max_retries', 'attempts', 'source', 'ts']);
  });

  test('a forbidden name inside data or nested deeper is data, not a forbidden key', () => {
    const body = with_({ data: { timestamp: 1, meta: { ts: 2 } } });
    const { env, warnings } = collect(json(body));
    assert.deepEqual(env, body);
    assert.deepEqual(warnings, []);
  });

  test('a non-empty list as data rejects the message with one warning for /data', () => {
    const { env, warnings } = collect(json({ ...with_({ data: [1] }), timestamp: 1 }));
    assert.deepEqual(env, {});
    assert.deepEqual(
      warnings.map((w) => w.pointer),
      ['/data'],
    );
  });

  test('an empty list as data (PHP’s empty payload) reads as {}', () => {
    const { env, warnings } = collect(json(with_({ data: [] })));
    assert.deepEqual(env.data, {});
    assert.ok(EnvelopeCodec.accepts(env), "EnvelopeCodec.accepts(env)");
    assert.deepEqual(warnings, []);
  });

  test('a per-call sink wins over the process-wide one', () => {
    const global: string[] = [];
    const local: string[] = [];
    EnvelopeCodec.setWarningHandler((_m, pointer) => global.push(pointer));
    EnvelopeCodec.decode(json({ ...VALID, timestamp: 1 }), (_m, pointer) => local.push(pointer));
    assert.deepEqual(local, ['/timestamp']);
    assert.deepEqual(global, []);
    EnvelopeCodec.decode(json({ ...VALID, timestamp: 1 }));
    assert.deepEqual(global, ['/timestamp']);
  });

  test('without a sink the warning goes to process.emitWarning; setWarningHandler(null) restores it', async () => {
    EnvelopeCodec.setWarningHandler(() => {});
    EnvelopeCodec.setWarningHandler(null);
    const seen = new Promise<Error & { code?: string; detail?: string }>((resolve) => process.once('warning', resolve));
    EnvelopeCodec.decode(json(withMeta({ ts: 1 })));
    const warning = await seen;
    assert.equal(warning.name, 'BabelQueueWarning');
    assert.equal(warning.code, 'BABELQUEUE_DECODE');
    assert.ok(warning.message.includes('/meta/ts'), "warning.message.includes('/meta/ts')");
  });
});

describe('EnvelopeCodec.urn and accepts', () => {
  const urnCases: [string, unknown, string | null][] = [
    ['job', { job: 'urn:a:b' }, 'urn:a:b'],
    ['job trimmed', { job: '  urn:a:b\n' }, 'urn:a:b'],
    ['urn alias', { urn: 'urn:a:c' }, 'urn:a:c'],
    ['job wins over urn', { job: 'urn:a:b', urn: 'urn:a:c' }, 'urn:a:b'],
    ['blank job falls back to urn', { job: '  ', urn: ' urn:a:c ' }, 'urn:a:c'],
    ['non-string job falls back to urn', { job: 7, urn: 'urn:a:c' }, 'urn:a:c'],
    ['neither', { data: {} }, null],
    ['both blank', { job: '', urn: ' ' }, null],
    ['non-string urn', { urn: ['urn:a:c'] }, null],
    ['not an object', 'urn:a:b', null],
    ['null', null, null],
  ];
  for (const [what, env, expected] of urnCases) {
    test(`urn(): ${what}`, () => assert.equal(EnvelopeCodec.urn(env), expected));
  }

  const acceptCases: [string, unknown, boolean][] = [
    ['valid', VALID, true],
    ['urn alias', { ...VALID, job: undefined, urn: 'urn:a:b' }, true],
    ['unknown fields', { ...VALID, extra: { deep: [1] } }, true],
    ['negative attempts (not checked)', with_({ attempts: -1 }), true],
    ['non-UUID trace id (not checked)', with_({ trace_id: 'trace-123' }), true],
    ['missing meta.id and lang (not checked)', { ...VALID, meta: { schema_version: 1 } }, true],
    ['no identity', { ...VALID, job: ' ' }, false],
    ['meta missing', { ...VALID, meta: undefined }, false],
    ['meta an array', with_({ meta: [1] }), false],
    ['schema_version 2', withMeta({ schema_version: 2 }), false],
    ['schema_version "1"', withMeta({ schema_version: '1' }), false],
    ['schema_version missing', withMeta({ schema_version: undefined }), false],
    ['data null', with_({ data: null }), false],
    ['data an array', with_({ data: [] }), false],
    ['data a string', with_({ data: '{}' }), false],
    ['attempts a string', with_({ attempts: '0' }), false],
    ['attempts a boolean', with_({ attempts: true }), false],
    ['attempts 1.5', with_({ attempts: 1.5 }), false],
    ['attempts missing', with_({ attempts: undefined }), false],
    ['trace_id blank', with_({ trace_id: ' \t' }), false],
    ['trace_id a number', with_({ trace_id: 5 }), false],
    ['not an object', [VALID], false],
  ];
  for (const [what, env, expected] of acceptCases) {
    test(`accepts(): ${what}`, () => assert.equal(EnvelopeCodec.accepts(env), expected));
  }

  test('JSON cannot tell 1.0 from 1: "schema_version":1.0 and "attempts":2.0 are accepted', () => {
    const body = json(VALID).replace('"schema_version":1', '"schema_version":1.0').replace('"attempts":0', '"attempts":2.0');
    assert.ok(EnvelopeCodec.accepts(EnvelopeCodec.decode(body)), "EnvelopeCodec.accepts(EnvelopeCodec.decode(body))");
  });
});
