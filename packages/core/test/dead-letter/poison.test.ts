import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, poisonRecord } from '@babelqueue/core';

const OPTIONS = { originalQueue: 'orders', attempts: 1, error: 'body is not a JSON object', exception: null, failedAt: 1749132730000 };
const BLOCK_JSON =
  '{"reason":"poison","error":"body is not a JSON object","exception":null,"failed_at":1749132730000,"original_queue":"orders","attempts":1,"lang":"node"}';

describe('poisonRecord', () => {
  const objects: [string, string, string][] = [
    ['an identity-less object', '{"data":{"n":12345678901234567890},"x":1.0}', `{"data":{"n":12345678901234567890},"x":1.0,"dead_letter":${BLOCK_JSON}}`],
    ['an unsupported schema version', '{"job":"j","meta":{"schema_version":2}}', `{"job":"j","meta":{"schema_version":2},"dead_letter":${BLOCK_JSON}}`],
    ['an empty object', '{}', `{"dead_letter":${BLOCK_JSON}}`],
    ['a pretty object', '{\n  "b": 1,\n  "a": 2\n}', `{\n  "b": 1,\n  "a": 2,"dead_letter":${BLOCK_JSON}\n}`],
    ['an object that already has dead_letter (replaced in place)', '{"dead_letter":{"reason":"failed"},"z":1}', `{"dead_letter":${BLOCK_JSON},"z":1}`],
  ];
  for (const [what, body, expected] of objects) {
    test(`object body keeps its members in order: ${what}`, () => {
      assert.equal(poisonRecord(body, OPTIONS), expected);
      const bytes = poisonRecord(Buffer.from(body), OPTIONS);
      assert.ok(Buffer.isBuffer(bytes), "Buffer.isBuffer(bytes)");
      assert.equal(bytes.toString('utf8'), expected);
    });
  }

  const wrapped: [string, string][] = [
    ['not JSON', 'hello {'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"x"'],
    ['a number', '42'],
    ['null', 'null'],
    ['empty', ''],
    ['a BOM-prefixed object', '\ufeff{"job":"j"}'],
    ['non-ASCII text', 'Café ☕ "quoted" \\ \n\u2028'],
  ];
  for (const [what, body] of wrapped) {
    test(`other valid UTF-8 is wrapped under raw: ${what}`, () => {
      const expected = `{"raw":${JSON.stringify(body)},"dead_letter":${BLOCK_JSON}}`;
      assert.equal(poisonRecord(body, OPTIONS), expected);
      const bytes = poisonRecord(new TextEncoder().encode(body), OPTIONS);
      assert.ok(Buffer.isBuffer(bytes), "Buffer.isBuffer(bytes)");
      assert.equal(bytes.toString('utf8'), expected);
      assert.equal((JSON.parse(expected) as { raw: string }).raw, body);
    });
  }

  test('bytes that are not valid UTF-8 are kept as standard padded base64', () => {
    const body = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xff, 0x0e, 0x7d]);
    const record = poisonRecord(body, OPTIONS);
    assert.equal(record.toString('utf8'), `{"raw":"eyJhIjr/Dn0=","raw_encoding":"base64","dead_letter":${BLOCK_JSON}}`);
    const parsed = JSON.parse(record.toString('utf8')) as { raw: string };
    assert.deepEqual(Buffer.from(parsed.raw, 'base64'), body);
  });

  test('the record fails accepts() and is itself never an envelope', () => {
    for (const body of ['[1]', '{"x":1}', 'nope']) {
      assert.equal(EnvelopeCodec.accepts(EnvelopeCodec.decode(poisonRecord(body, OPTIONS))), false);
    }
  });

  test('the dead_letter block says poison, with the counted attempt and lang node', () => {
    const record = JSON.parse(poisonRecord('x', { originalQueue: 'q', attempts: 4 })) as { dead_letter: Record<string, unknown> };
    assert.equal(record.dead_letter.reason, 'poison');
    assert.equal(record.dead_letter.attempts, 4);
    assert.equal(record.dead_letter.original_queue, 'q');
    assert.equal(record.dead_letter.lang, 'node');
    assert.equal(record.dead_letter.error, null);
  });
});
