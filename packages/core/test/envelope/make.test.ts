import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, InvalidMessageError, SchemaValidator, type JsonObject } from '@babelqueue/core';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const URN = 'urn:babel:orders:created';

describe('EnvelopeCodec.make', () => {
  test('stamps the canonical fields', () => {
    const before = Date.now();
    const env = EnvelopeCodec.make(URN, { order_id: 1042 }, { queue: 'orders' });
    const after = Date.now();
    assert.deepEqual(Object.keys(env), ['job', 'trace_id', 'data', 'meta', 'attempts']);
    assert.deepEqual(Object.keys(env.meta), ['id', 'queue', 'lang', 'schema_version', 'created_at']);
    assert.equal(env.job, URN);
    assert.deepEqual(env.data, { order_id: 1042 });
    assert.equal(env.meta.queue, 'orders');
    assert.equal(env.meta.lang, 'node');
    assert.equal(env.meta.schema_version, 1);
    assert.ok(Number.isInteger(env.meta.created_at) && env.meta.created_at >= before && env.meta.created_at <= after, "Number.isInteger(env.meta.created_at) && env.meta.created_at >= before && env.meta.created_at <= ...");
    assert.equal(env.attempts, 0);
    assert.match(env.trace_id, UUID_V4);
    assert.match(env.meta.id, UUID_V4);
    assert.notEqual(env.trace_id, env.meta.id);
    assert.equal(SchemaValidator.check(env), null);
    assert.ok(EnvelopeCodec.accepts(env), "EnvelopeCodec.accepts(env)");
  });

  test('mints fresh ids for every message', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const env = EnvelopeCodec.make(URN, {});
      ids.add(env.meta.id).add(env.trace_id);
    }
    assert.equal(ids.size, 200);
  });

  test('trims the URN and defaults the queue to "default"', () => {
    const env = EnvelopeCodec.make(`  ${URN}\n`, {});
    assert.equal(env.job, URN);
    assert.equal(env.meta.queue, 'default');
    assert.equal(EnvelopeCodec.make(URN, {}, { queue: null }).meta.queue, 'default');
  });

  for (const urn of ['', '   ', '\t\n', 42, null, undefined]) {
    test(`refuses the URN ${JSON.stringify(urn)}`, () => {
      assert.throws(() => EnvelopeCodec.make(urn as string, {}), (err: unknown) => {
        assert.ok(err instanceof InvalidMessageError, "err instanceof InvalidMessageError");
        assert.equal(err.pointer, '/job');
        return true;
      });
    });
  }

  test('refuses a blank queue name', () => {
    assert.throws(() => EnvelopeCodec.make(URN, {}, { queue: '  ' }), { name: 'InvalidMessageError', pointer: '/meta/queue' });
  });

  test('reuses an inherited trace id trimmed and verbatim (no format check)', () => {
    assert.equal(EnvelopeCodec.make(URN, {}, { traceId: '  trace-123 ' }).trace_id, 'trace-123');
    const upper = '7B3F9C2A-E41D-4F88-9B2A-1C0D5E6F7A8B';
    assert.equal(EnvelopeCodec.make(URN, {}, { traceId: upper }).trace_id, upper);
  });

  for (const traceId of ['', '   ', null, undefined]) {
    test(`mints a trace id when the inherited one is ${JSON.stringify(traceId)}`, () => {
      assert.match(EnvelopeCodec.make(URN, {}, { traceId }).trace_id, UUID_V4);
    });
  }

  test('keeps data by reference, in the caller’s key order', () => {
    const data = { b: 1, a: [1, 'x', null, true, { c: 2.5 }] };
    assert.equal(EnvelopeCodec.make(URN, data).data, data);
  });

  test('accepts null-prototype objects and shared (acyclic) references', () => {
    const shared = { x: 1 };
    const data = Object.assign(Object.create(null) as JsonObject, { one: shared, two: shared, list: [shared, shared] });
    assert.doesNotThrow(() => EnvelopeCodec.make(URN, data));
  });

  class Money {
    amount = 5;
  }
  const cycle: Record<string, unknown> = { name: 'c' };
  cycle.self = cycle;
  const listCycle: unknown[] = [];
  listCycle.push({ back: listCycle });
  const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
  const bad: [string, unknown, string][] = [
    ['undefined', { a: undefined }, '/data/a'],
    ['a function', { a: () => 1 }, '/data/a'],
    ['a symbol', { a: Symbol('s') }, '/data/a'],
    ['a BigInt', { a: 10n }, '/data/a'],
    ['NaN', { a: { b: [1, Number.NaN] } }, '/data/a/b/1'],
    ['Infinity', { a: Infinity }, '/data/a'],
    ['-Infinity', { a: -Infinity }, '/data/a'],
    ['a cycle', cycle, '/data/self'],
    ['a cycle through a list', { l: listCycle }, '/data/l/0/back'],
    ['a Date', { when: new Date(0) }, '/data/when'],
    ['a Map', { m: new Map() }, '/data/m'],
    ['a class instance', { price: new Money() }, '/data/price'],
    ['a boxed string', { s: new String('x') }, '/data/s'],
    ['a Buffer', { b: Buffer.from('x') }, '/data/b'],
    ['an array hole', { list: sparse }, '/data/list/1'],
    ['a symbol key', { [Symbol('k')]: 1 }, '/data'],
    ['an escaped key', { 'a/b': { 'c~d': undefined } }, '/data/a~1b/c~0d'],
    ['an array as data', [1, 2], '/data'],
    ['null as data', null, '/data'],
    ['a string as data', 'x', '/data'],
    ['undefined as data', undefined, '/data'],
    ['a class instance as data', new Money(), '/data'],
  ];
  for (const [what, data, pointer] of bad) {
    test(`refuses ${what} at ${pointer}`, () => {
      assert.throws(
        () => EnvelopeCodec.make(URN, data as JsonObject),
        (err: unknown) => {
          assert.ok(err instanceof InvalidMessageError, String(err));
          assert.ok(err instanceof TypeError, "err instanceof TypeError");
          assert.equal(err.pointer, pointer);
          assert.ok(err.message.startsWith(`${pointer}: `), err.message);
          return true;
        },
      );
    });
  }
});
