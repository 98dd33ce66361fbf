import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeUtf8Strict, isValidUtf8 } from '@babelqueue/core';

const rows: [string, number[], boolean][] = [
  ['ASCII', [0x7b, 0x7d], true],
  ['two-byte é', [0xc3, 0xa9], true],
  ['three-byte ☕', [0xe2, 0x98, 0x95], true],
  ['four-byte 🚀', [0xf0, 0x9f, 0x9a, 0x80], true],
  ['empty', [], true],
  ['a lone continuation byte', [0x80], false],
  ['0xff', [0xff], false],
  ['a truncated sequence', [0xe2, 0x98], false],
  ['an overlong "/"', [0xc0, 0xaf], false],
  ['an encoded surrogate', [0xed, 0xa0, 0x80], false],
  ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80], false],
];

describe('strict UTF-8', () => {
  for (const [what, bytes, valid] of rows) {
    test(`${what}: ${valid ? 'valid' : 'invalid'}`, () => {
      const input = Uint8Array.from(bytes);
      assert.equal(isValidUtf8(input), valid);
      assert.equal(decodeUtf8Strict(input), valid ? new TextDecoder().decode(input) : null);
      assert.equal(decodeUtf8Strict(Buffer.from(input)), valid ? Buffer.from(input).toString('utf8') : null);
    });
  }

  test('a view into a larger buffer decodes only its own bytes', () => {
    const backing = Buffer.from('xx{"a":1}yy');
    assert.equal(decodeUtf8Strict(new Uint8Array(backing.buffer, backing.byteOffset + 2, 7)), '{"a":1}');
  });
});
