import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, SchemaValidator, annotate, deadLetterBlock, describeError, DEAD_LETTER_REASONS } from '@babelqueue/core';

describe('deadLetterBlock', () => {
  test('canonical members, lang "node", failed_at in ms', () => {
    const before = Date.now();
    const block = deadLetterBlock({ reason: 'failed', error: 'Payment gateway timeout', exception: 'GatewayTimeout', originalQueue: 'orders', attempts: 3 });
    assert.deepEqual(Object.keys(block), ['reason', 'error', 'exception', 'failed_at', 'original_queue', 'attempts', 'lang']);
    assert.equal(block.lang, 'node');
    assert.ok(Number.isInteger(block.failed_at) && block.failed_at >= before && block.failed_at <= Date.now(), "Number.isInteger(block.failed_at) && block.failed_at >= before && block.failed_at <= Date.now()");
    assert.deepEqual(
      { ...block, failed_at: 0 },
      { reason: 'failed', error: 'Payment gateway timeout', exception: 'GatewayTimeout', failed_at: 0, original_queue: 'orders', attempts: 3, lang: 'node' },
    );
  });

  test('error and exception default to null and are always present', () => {
    const block = deadLetterBlock({ reason: 'poison', originalQueue: 'q', attempts: 1, failedAt: 5 });
    assert.equal(block.error, null);
    assert.equal(block.exception, null);
    assert.equal(JSON.stringify(block), '{"reason":"poison","error":null,"exception":null,"failed_at":5,"original_queue":"q","attempts":1,"lang":"node"}');
  });

  test('the three reasons', () => assert.deepEqual([...DEAD_LETTER_REASONS], ['failed', 'unknown_urn', 'poison']));

  const bad: [string, Record<string, unknown>, typeof TypeError | typeof RangeError][] = [
    ['an unknown reason', { reason: 'expired' }, TypeError],
    ['a non-string queue', { originalQueue: 5 }, TypeError],
    ['negative attempts', { attempts: -1 }, RangeError],
    ['fractional attempts', { attempts: 1.5 }, RangeError],
    ['a non-integer failedAt', { failedAt: 1.5 }, RangeError],
    ['a negative failedAt', { failedAt: -1 }, RangeError],
  ];
  for (const [what, patch, kind] of bad) {
    test(`refuses ${what}`, () => {
      const input = { reason: 'failed', originalQueue: 'q', attempts: 1, ...patch };
      assert.throws(() => deadLetterBlock(input as never), kind);
    });
  }
});

describe('annotate', () => {
  test('returns a copy with the block; the original is untouched; the record passes the schema', () => {
    const env = EnvelopeCodec.make('urn:babel:orders:charge', { order_id: 1042 }, { queue: 'orders' });
    const copy = annotate(env, 'failed', 'orders', { attempts: 3, error: 'timeout', exception: 'GatewayTimeout', failedAt: 1749132730000 });
    assert.equal(env.dead_letter, undefined);
    assert.notEqual(copy, env);
    assert.equal(copy.trace_id, env.trace_id);
    assert.equal(copy.meta.id, env.meta.id);
    assert.deepEqual(copy.dead_letter, {
      reason: 'failed',
      error: 'timeout',
      exception: 'GatewayTimeout',
      failed_at: 1749132730000,
      original_queue: 'orders',
      attempts: 3,
      lang: 'node',
    });
    assert.equal(SchemaValidator.check(copy), null);
    const encoded = EnvelopeCodec.encode(copy);
    assert.ok(encoded.startsWith(EnvelopeCodec.encode(env).slice(0, -1) + ',"dead_letter":{"reason":"failed"'), "encoded.startsWith(EnvelopeCodec.encode(env).slice(0, -1) + ',\"dead_letter\":{\"reason\":\"failed\"')");
  });

  test('replaces an existing block', () => {
    const env = annotate(EnvelopeCodec.make('urn:a:b', {}), 'failed', 'q', { attempts: 1 });
    assert.equal(annotate(env, 'unknown_urn', 'q', { attempts: 2 }).dead_letter?.reason, 'unknown_urn');
  });
});

describe('describeError', () => {
  class GatewayTimeout extends Error {}
  class Named extends Error {
    override name = 'PaymentDeclined';
  }
  const rows: [string, unknown, { error: string | null; exception: string | null }][] = [
    ['an Error', new Error('boom'), { error: 'boom', exception: 'Error' }],
    ['a TypeError', new TypeError('bad'), { error: 'bad', exception: 'TypeError' }],
    ['a subclass that keeps name "Error"', new GatewayTimeout('slow'), { error: 'slow', exception: 'GatewayTimeout' }],
    ['a subclass with its own name', new Named('no'), { error: 'no', exception: 'PaymentDeclined' }],
    ['a thrown string', 'oops', { error: 'oops', exception: null }],
    ['a thrown number', 42, { error: '42', exception: null }],
    ['undefined (nothing thrown)', undefined, { error: null, exception: null }],
    ['null', null, { error: 'null', exception: null }],
    ['a plain object, as JSON text', { code: 'E42', detail: { retry: false } }, { error: '{"code":"E42","detail":{"retry":false}}', exception: null }],
    ['an object with a cycle and a BigInt', cyclic(), { error: '{"n":"12345678901234567890","self":"[Circular]"}', exception: null }],
  ];
  for (const [what, thrown, expected] of rows) {
    test(what, () => assert.deepEqual(describeError(thrown), expected));
  }
});

function cyclic(): object {
  const value: Record<string, unknown> = { n: 12345678901234567890n };
  value.self = value;
  return value;
}
