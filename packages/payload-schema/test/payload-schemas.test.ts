import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidPayloadError, PayloadSchemas } from '@babelqueue/payload-schema';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(here, '../../..');

interface PayloadBlock {
  schema: object;
  cases: { name: string; valid: boolean; data: unknown; violation?: string }[];
}

function block(dir: string): PayloadBlock | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { payload_schema?: PayloadBlock }).payload_schema;
  } catch {
    return undefined;
  }
}

const URN = 'urn:babel:test:payload';
const suites = [
  { name: 'own fixtures', block: block(join(repoRoot, 'packages/core/test/fixtures')) },
  { name: 'shared cross-SDK suite', block: block(resolve(repoRoot, '../shared/conformance')) },
];

for (const { name, block: payload } of suites) {
  describe(`conformance payload_schema: ${name}`, { skip: payload === undefined ? `SKIPPED: no ${name} on this machine` : false }, () => {
    const schemas = new PayloadSchemas({ [URN]: payload!.schema });
    for (const c of payload!.cases) {
      test(`${c.name} (${c.valid ? 'valid' : 'invalid'})`, () => {
        assert.equal(schemas.isValid(URN, c.data), c.valid);
        const violation = schemas.check(URN, c.data);
        assert.equal(violation === null, c.valid);
        if (c.violation !== undefined) assert.equal(violation, c.violation);
      });
    }
  });
}

describe('PayloadSchemas', () => {
  const schema = { type: 'object', required: ['order_id'], properties: { order_id: { type: 'integer' }, code: { enum: [1, 'a'] } } };

  test('a URN without a schema is not checked', () => {
    const schemas = new PayloadSchemas({ [URN]: schema });
    assert.equal(schemas.check('urn:other', 'anything'), null);
    assert.equal(schemas.schemaFor('urn:other'), undefined);
    assert.equal(schemas.schemaFor(URN), schema);
  });

  test('every source shape: object, Map, function, registry entries', () => {
    const sources = [
      { [URN]: schema },
      new Map([[URN, schema]]),
      (urn: string) => (urn === URN ? schema : undefined),
      [{ urn: URN, schema, owner: 'orders-team', status: 'active' }],
    ];
    for (const source of sources) {
      const schemas = new PayloadSchemas(source);
      assert.equal(schemas.check(URN, {}), 'order_id: missing_required');
      assert.equal(schemas.check('urn:none', {}), null);
    }
  });

  test('a plain-object source does not see inherited names', () => {
    assert.equal(new PayloadSchemas({}).schemaFor('toString'), undefined);
  });

  test('enum and const compare strictly', () => {
    const schemas = new PayloadSchemas({ [URN]: schema });
    assert.equal(schemas.check(URN, { order_id: 1, code: 1 }), null);
    assert.equal(schemas.check(URN, { order_id: 1, code: '1' }), 'code: not_in_enum');
  });

  test('keywords beyond the common subset are enforced and named; unknown keywords are ignored', () => {
    const schemas = new PayloadSchemas({ [URN]: { type: 'object', properties: { n: { maximum: 3, 'x-gdpr-sensitive': true } } } });
    assert.equal(schemas.check(URN, { n: 2 }), null);
    assert.equal(schemas.check(URN, { n: 4 }), 'n: violates_maximum');
  });

  test('a path through a key that looks like an index, and an escaped key', () => {
    const schemas = new PayloadSchemas({
      [URN]: { type: 'object', properties: { '0': { type: 'object', properties: { 'a/b': { type: 'string' } } } } },
    });
    assert.equal(schemas.check(URN, { '0': { 'a/b': 1 } }), '0.a/b: not_a_string');
  });

  test('validate throws InvalidPayloadError(urn, violation)', () => {
    const schemas = new PayloadSchemas({ [URN]: schema });
    assert.throws(
      () => schemas.validate(URN, { order_id: 'x' }),
      (err: unknown) => err instanceof InvalidPayloadError && err.urn === URN && err.violation === 'order_id: not_an_integer',
    );
    assert.doesNotThrow(() => schemas.validate(URN, { order_id: 1 }));
  });

  test('wrap runs the handler only for valid data, so invalid data takes the retry / DLQ path', async () => {
    const schemas = new PayloadSchemas({ [URN]: schema });
    const seen: unknown[] = [];
    const handler = schemas.wrap(async (data: Record<string, unknown>, message: { urn: string }) => {
      seen.push(data);
      return message.urn;
    });
    assert.equal(await handler({ order_id: 1 }, { urn: URN }), URN);
    assert.throws(() => handler({}, { urn: URN }), InvalidPayloadError);
    assert.equal(await handler({}, { urn: 'urn:unchecked' }), 'urn:unchecked');
    assert.deepEqual(seen, [{ order_id: 1 }, {}]);
  });
});
