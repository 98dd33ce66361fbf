import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NotAJsonObjectError,
  deadLetterBlock,
  encodeDeadLetter,
  reemit,
  withAttempts,
  withDeadLetter,
  withoutDeadLetter,
} from '@babelqueue/core';

const BLOCK = deadLetterBlock({ reason: 'failed', error: 'boom é', exception: 'Error', originalQueue: 'orders', attempts: 3, failedAt: 1749132730000 });
const BLOCK_JSON = encodeDeadLetter(BLOCK);

/** Bodies a JSON.parse + JSON.stringify round trip would alter, with what it would lose. */
const HOSTILE = [
  ['an integer beyond 2^53', '{"job":"j","data":{"id":12345678901234567890123},"attempts":0}'],
  ['1.0 and exponents', '{"job":"j","data":{"price":1.0,"e":1E+2,"z":-0.0},"attempts":0}'],
  ['integer-like keys in any order', '{"job":"j","data":{"10":"a","2":"b","x":1,"1":"c"},"attempts":0,"9":"top"}'],
  ['\\u00e9-style escapes and \\/', '{"job":"j","data":{"s":"Caf\\u00e9 \\/ \\ud83d\\ude80 \\"q\\" \\\\"},"attempts":0}'],
  ['raw UTF-8', '{"job":"j","data":{"s":"名前 ☕ 🚀"},"attempts":0}'],
  ['unknown fields', '{"x_route":{"a":[1,{"b":null}]},"job":"j","data":{},"attempts":0,"zz":true}'],
  ['a pretty-printed producer', '{\n  "job" : "j",\n\t"data": {\n    "a": [ 1, 2 ]\n  },\r\n  "attempts" :\n 0\n}\n'],
  ['"attempts" inside strings and nested objects', '{"job":"\\"attempts\\":1","data":{"attempts":7,"l":[{"attempts":8}],"s":"attempts\\\\"},"meta":{"attempts":9},"attempts":0}'],
  ['attempts first', '{"attempts":0,"job":"j","data":{}}'],
  ['duplicate keys', '{"job":"j","attempts":0,"data":{},"attempts":0}'],
] as const;

describe('withAttempts', () => {
  for (const [what, body] of HOSTILE) {
    test(`edits only the top-level value: ${what}`, () => {
      const out = withAttempts(body, 5);
      // Exactly the top-level attempts tokens changed, every other byte is as it was.
      assert.equal(out, replaceTopLevelAttempts(body, '5'));
      assert.equal((JSON.parse(out) as { attempts: number }).attempts, 5);
      const bytes = withAttempts(Buffer.from(body, 'utf8'), 5);
      assert.ok(Buffer.isBuffer(bytes), "Buffer.isBuffer(bytes)");
      assert.equal(bytes.toString('utf8'), out);
    });
  }

  test('appends attempts when the body has none', () => {
    assert.equal(withAttempts('{"job":"j"}', 2), '{"job":"j","attempts":2}');
    assert.equal(withAttempts('{}', 0), '{"attempts":0}');
    assert.equal(withAttempts(' { } ', 1), ' {"attempts":1 } ');
    assert.equal(withAttempts('{\n  "job": "j"\n}', 1), '{\n  "job": "j","attempts":1\n}');
  });

  test('a key spelled with escapes is the same key', () => {
    assert.equal(withAttempts('{"\\u0061ttempts":0}', 3), '{"\\u0061ttempts":3}');
  });

  test('a Uint8Array that is not a Buffer, or a view into a larger buffer, gives a Buffer', () => {
    const backing = Buffer.from('xx{"attempts":0}yy');
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 2, 14);
    assert.deepEqual(withAttempts(view, 4), Buffer.from('{"attempts":4}'));
    assert.deepEqual(withAttempts(new TextEncoder().encode('{"attempts":0}'), 4), Buffer.from('{"attempts":4}'));
  });

  test('an attempts count beyond 2^53 (a decoder accepted it) still prints as a JSON integer', () => {
    assert.equal(withAttempts('{"attempts":0}', 2 ** 64), '{"attempts":18446744073709552000}');
  });

  for (const n of [-1, 1.5, Number.NaN, Infinity]) {
    test(`refuses attempts ${n}`, () => assert.throws(() => withAttempts('{}', n), RangeError));
  }
});

describe('withDeadLetter / withoutDeadLetter', () => {
  for (const [what, body] of HOSTILE) {
    test(`appends the block and leaves the body verbatim: ${what}`, () => {
      const out = withDeadLetter(body, BLOCK);
      const close = body.lastIndexOf('}');
      assert.equal(out, `${body.slice(0, lastValueEnd(body))},"dead_letter":${BLOCK_JSON}${body.slice(lastValueEnd(body), close)}}${body.slice(close + 1)}`);
      assert.deepEqual((JSON.parse(out) as { dead_letter: unknown }).dead_letter, BLOCK);
      assert.equal(withoutDeadLetter(out), body);
      const bytes = withDeadLetter(Buffer.from(body, 'utf8'), BLOCK);
      assert.equal(bytes.toString('utf8'), out, 'non-ASCII in the block is written as UTF-8 bytes');
      assert.deepEqual(withoutDeadLetter(bytes), Buffer.from(body, 'utf8'));
    });
  }

  test('replaces an existing block in place', () => {
    const body = '{"job":"j","dead_letter":{"reason":"poison"},"attempts":3,"x":1}';
    assert.equal(withDeadLetter(body, BLOCK), `{"job":"j","dead_letter":${BLOCK_JSON},"attempts":3,"x":1}`);
  });

  const removals: [string, string, string][] = [
    ['the only member', '{"dead_letter":{}}', '{}'],
    ['the first member', '{"dead_letter":{"a":[1]} , "job":"j"}', '{"job":"j"}'],
    ['the first member, pretty', '{\n  "dead_letter": {},\n  "job": "j"\n}', '{\n  "job": "j"\n}'],
    ['a middle member', '{"job":"j","dead_letter":"x","attempts":1}', '{"job":"j","attempts":1}'],
    ['the last member, pretty', '{\n  "job": "j",\n  "dead_letter": {\n    "reason": "failed"\n  }\n}', '{\n  "job": "j"\n}'],
    ['every duplicate', '{"dead_letter":1,"dead_letter":2,"job":"j","dead_letter":3}', '{"job":"j"}'],
    ['nothing when absent', '{"job":"j","data":{"dead_letter":1}}', '{"job":"j","data":{"dead_letter":1}}'],
  ];
  for (const [what, body, expected] of removals) {
    test(`withoutDeadLetter removes ${what}`, () => {
      assert.equal(withoutDeadLetter(body), expected);
      JSON.parse(withoutDeadLetter(body));
    });
  }

  test('reemit resets a DLQ record for redrive in one pass', () => {
    const record = `{"job":"j","data":{"n":1.0},"attempts":3,"dead_letter":${BLOCK_JSON}}`;
    assert.equal(reemit(record, { deadLetter: null, attempts: 0 }), '{"job":"j","data":{"n":1.0},"attempts":0}');
    assert.equal(reemit(record, {}), record);
  });
});

describe('re-emit refuses a body that is not a JSON object', () => {
  const bad = [
    ['empty', ''],
    ['whitespace', '  \n'],
    ['an array', '[{"attempts":0}]'],
    ['a string', '"{}"'],
    ['a number', '7'],
    ['trailing content', '{"attempts":0} {}'],
    ['a missing colon', '{"attempts" 0}'],
    ['a missing comma', '{"a":1 "attempts":0}'],
    ['a trailing comma', '{"a":1,}'],
    ['an unquoted key', '{attempts:0}'],
    ['an unterminated string', '{"a":"x}'],
    ['an unterminated key', '{"a'],
    ['an unterminated object', '{"a":{"b":1}'],
    ['a mismatched bracket', '{"a":[1}'],
    ['an invalid scalar', '{"a":tru}'],
    ['a bare word', '{"a":undefined}'],
    ['a leading zero', '{"a":01}'],
    ['a missing value', '{"a":}'],
    ['an invalid escape in a key', '{"\\x":1}'],
  ] as const;
  for (const [what, body] of bad) {
    test(what, () => {
      assert.throws(() => withAttempts(body, 1), NotAJsonObjectError);
      assert.throws(() => withDeadLetter(Buffer.from(body), BLOCK), NotAJsonObjectError);
    });
  }

  test('the error names the offset, never the body', () => {
    const secret = 'card-4111111111111111';
    assert.throws(
      () => withAttempts(`{"a":"${secret}"`, 1),
      (err: unknown) => err instanceof NotAJsonObjectError && !err.message.includes(secret) && typeof err.offset === 'number',
    );
  });
});

/** Reference edit: parse with a tokenizer that knows nesting, replace top-level "attempts" values. */
function replaceTopLevelAttempts(body: string, value: string): string {
  let out = '';
  let depth = 0;
  let i = 0;
  let expectKey = false;
  while (i < body.length) {
    const c = body[i]!;
    if (c === '"') {
      let j = i + 1;
      while (body[j] !== '"') j += body[j] === '\\' ? 2 : 1;
      const token = body.slice(i, j + 1);
      out += token;
      i = j + 1;
      if (depth === 1 && expectKey && JSON.parse(token) === 'attempts') {
        while (body[i] !== ':') out += body[i++];
        out += body[i++];
        while (/\s/.test(body[i]!)) out += body[i++];
        while (i < body.length && !/[\s,}]/.test(body[i]!)) i++;
        out += value;
      }
      expectKey = false;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    if (c === '}' || c === ']') depth--;
    if ((c === '{' && depth === 1) || (c === ',' && depth === 1)) expectKey = true;
    out += c;
    i++;
  }
  return out;
}

/** Offset just past the last top-level value (before trailing whitespace and the closing brace). */
function lastValueEnd(body: string): number {
  let end = body.lastIndexOf('}');
  while (/\s/.test(body[end - 1]!)) end--;
  return end;
}
