import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, encodeDeadLetter, type DeadLetterBlock, type Envelope } from '@babelqueue/core';

const META = { id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', queue: 'orders', lang: 'node', schema_version: 1, created_at: 1749132727000 };
const TRACE = '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b';
const META_JSON =
  '{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"node","schema_version":1,"created_at":1749132727000}';
const BLOCK: DeadLetterBlock = {
  reason: 'failed',
  error: 'Payment gateway timeout',
  exception: 'GatewayTimeout',
  failed_at: 1749132730000,
  original_queue: 'orders',
  attempts: 3,
  lang: 'node',
};
const BLOCK_JSON =
  '{"reason":"failed","error":"Payment gateway timeout","exception":"GatewayTimeout","failed_at":1749132730000,"original_queue":"orders","attempts":3,"lang":"node"}';

describe('EnvelopeCodec.encode: canonical bytes', () => {
  test('a produced envelope', () => {
    const env: Envelope = { job: 'urn:babel:orders:created', trace_id: TRACE, data: { order_id: 1042 }, meta: { ...META }, attempts: 0 };
    assert.equal(
      EnvelopeCodec.encode(env),
      `{"job":"urn:babel:orders:created","trace_id":"${TRACE}","data":{"order_id":1042},"meta":${META_JSON},"attempts":0}`,
    );
  });

  test('canonical order whatever order the object was built in; unknown members after attempts, dead_letter last', () => {
    const env = {
      dead_letter: { lang: 'node', attempts: 3, original_queue: 'orders', failed_at: 1749132730000, exception: 'GatewayTimeout', error: 'Payment gateway timeout', reason: 'failed' },
      attempts: 3,
      x_custom: { k: 1 },
      meta: { created_at: 1749132727000, schema_version: 1, lang: 'node', extra: true, queue: 'orders', id: META.id },
      '7': 'seven',
      data: { z: 1, a: 2 },
      trace_id: TRACE,
      job: 'urn:babel:orders:created',
    } as unknown as Envelope;
    assert.equal(
      EnvelopeCodec.encode(env),
      `{"job":"urn:babel:orders:created","trace_id":"${TRACE}","data":{"z":1,"a":2},` +
        `"meta":{"id":"${META.id}","queue":"orders","lang":"node","schema_version":1,"created_at":1749132727000,"extra":true},` +
        `"attempts":3,"7":"seven","x_custom":{"k":1},"dead_letter":${BLOCK_JSON}}`,
    );
  });

  test('each part out of order alone is still put in canonical order', () => {
    const canonical = `{"job":"j","trace_id":"${TRACE}","data":{},"meta":${META_JSON},"attempts":1,"x":1,"dead_letter":${BLOCK_JSON}}`;
    const base = { job: 'j', trace_id: TRACE, data: {}, meta: { ...META }, attempts: 1, x: 1, dead_letter: { ...BLOCK } };
    const { id, ...metaRest } = META;
    const { reason, ...blockRest } = BLOCK;
    const variants: Record<string, unknown>[] = [
      base,
      { ...base, meta: { ...metaRest, id } },
      { ...base, meta: { '5': 'five', ...META } },
      { ...base, dead_letter: { ...blockRest, reason } },
      { job: 'j', trace_id: TRACE, data: {}, meta: { ...META }, attempts: 1, dead_letter: { ...BLOCK }, x: 1 },
      { job: 'j', trace_id: TRACE, data: {}, meta: { ...META }, x: 1, attempts: 1, dead_letter: { ...BLOCK } },
    ];
    const expected = [canonical, canonical, canonical.replace('"created_at":1749132727000}', '"created_at":1749132727000,"5":"five"}'), canonical, canonical, canonical];
    variants.forEach((env, i) => assert.equal(EnvelopeCodec.encode(env as Envelope), expected[i], `variant ${i}`));
  });

  test('raw UTF-8, "/" and <>& unescaped, control characters as JSON short escapes or lowercase \\u00XX', () => {
    const env = EnvelopeCodec.make('urn:babel:t:e', {
      s: 'Café — naïve ☕ 🚀 a/b <b>&amp;</b> "q" \\ \n\t\r\b\f \u0001\u001f \u2028\u2029',
    });
    const json = EnvelopeCodec.encode(env);
    assert.ok(
      json.includes(
        '"s":"Café — naïve ☕ 🚀 a/b <b>&amp;</b> \\"q\\" \\\\ \\n\\t\\r\\b\\f \\u0001\\u001f \u2028\u2029"',
      ),
      json,
    );
    assert.doesNotMatch(json.replace(/"(?:[^"\\]|\\.)*"/g, '""'), /\s/, 'no whitespace outside strings, no trailing newline');
  });

  test('numbers as JavaScript prints them; integer-like data keys in JS object order', () => {
    const env = EnvelopeCodec.make('urn:babel:t:e', { ratio: 0.5, whole: 1.0, big: 1e21, small: 1e-7, neg: -0, b: 1, '10': 1, '2': 1 });
    assert.ok(EnvelopeCodec.encode(env).includes('"data":{"2":1,"10":1,"ratio":0.5,"whole":1,"big":1e+21,"small":1e-7,"neg":0,"b":1}'), "EnvelopeCodec.encode(env).includes('\"data\":{\"2\":1,\"10\":1,\"ratio\":0.5,\"whole\":1,\"big\":1e+21,\"small...");
  });

  test('members whose value JSON cannot hold are left out, as JSON.stringify does', () => {
    const env = { job: 'j', trace_id: TRACE, data: {}, meta: { ...META, note: undefined }, attempts: 0, dead_letter: undefined, f: () => 1 };
    assert.equal(
      EnvelopeCodec.encode(env as unknown as Envelope),
      `{"job":"j","trace_id":"${TRACE}","data":{},"meta":${META_JSON},"attempts":0}`,
    );
  });

  test('a meta that is not an object is written as it is', () => {
    const env = { job: 'j', trace_id: TRACE, data: {}, meta: 'm', attempts: 0 } as unknown as Envelope;
    assert.equal(EnvelopeCodec.encode(env), `{"job":"j","trace_id":"${TRACE}","data":{},"meta":"m","attempts":0}`);
  });

  test('inherited members are not written', () => {
    const env = Object.assign(Object.create({ inherited: 1 }) as Envelope, { job: 'j', trace_id: TRACE, data: {}, meta: META, attempts: 0 });
    assert.ok(!EnvelopeCodec.encode(env).includes('inherited'), "!EnvelopeCodec.encode(env).includes('inherited')");
  });

  test('encodeDeadLetter orders the block canonically and keeps extra members', () => {
    const { reason, ...rest } = BLOCK;
    assert.equal(encodeDeadLetter({ extra: 1, ...rest, reason } as DeadLetterBlock), `${BLOCK_JSON.slice(0, -1)},"extra":1}`);
  });

  test('make → encode → decode round-trips', () => {
    const env = EnvelopeCodec.make('urn:babel:orders:created', { a: [1, { b: null }], s: 'ü' }, { queue: 'orders', traceId: TRACE });
    assert.deepEqual(EnvelopeCodec.decode(EnvelopeCodec.encode(env)), env);
  });
});
