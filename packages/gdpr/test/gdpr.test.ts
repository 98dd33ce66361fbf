import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  AesGcmCipher,
  DecryptError,
  InvalidKeySizeError,
  MalformedCiphertextError,
  protect,
  sensitivePaths,
  unprotect,
  type Cipher,
} from '@babelqueue/gdpr';

const KEY = Buffer.alloc(32, 7);

const SCHEMA = {
  type: 'object',
  properties: {
    order_id: { type: 'integer' },
    email: { type: 'string', 'x-gdpr-sensitive': 'email' },
    profile: {
      type: 'object',
      properties: { full_name: { type: 'string', 'x-gdpr-sensitive': true }, tier: { type: 'string' } },
    },
    addresses: { type: 'array', items: { type: 'object', properties: { line: { 'x-gdpr-sensitive': 'address' } } } },
    card: { type: 'object', 'x-gdpr-sensitive': 'payment', properties: { pan: { 'x-gdpr-sensitive': true } } },
    not_marked: { 'x-gdpr-sensitive': false },
    blank: { 'x-gdpr-sensitive': '' },
  },
};

const data = () => ({
  order_id: 1042,
  email: 'zoë@example.com',
  profile: { full_name: 'Zoë Ådams', tier: 'gold' },
  addresses: [{ line: '1 Main St' }, { line: '2 Side Rd', zip: '12345' }],
  card: { pan: '4242424242424242', exp: { m: 12, y: 2030 } },
  not_marked: 'visible',
  blank: 'visible',
});

describe('sensitive paths (x-gdpr-sensitive)', () => {
  test('dotted paths, array items as field[], categories, sorted; false and "" mark nothing', () => {
    assert.deepEqual(sensitivePaths(SCHEMA), [
      { path: 'addresses[].line', category: 'address' },
      { path: 'card', category: 'payment' },
      { path: 'card.pan', category: '' },
      { path: 'email', category: 'email' },
      { path: 'profile.full_name', category: '' },
    ]);
  });

  test('a mark on the root is the path ""; non-object schemas have none', () => {
    assert.deepEqual(sensitivePaths({ 'x-gdpr-sensitive': true }), [{ path: '', category: '' }]);
    assert.deepEqual(sensitivePaths(null), []);
    assert.deepEqual(sensitivePaths({ properties: [1, 2] }), []);
  });
});

describe('protect / unprotect', () => {
  const cipher = new AesGcmCipher(KEY);

  test('marked leaves become strings, the rest is untouched, and unprotect restores the same JSON value', () => {
    const d = data();
    protect(d, SCHEMA, cipher);
    assert.equal(typeof d.email, 'string');
    assert.notEqual(d.email, 'zoë@example.com');
    assert.equal(typeof d.profile.full_name, 'string');
    assert.equal(d.profile.tier, 'gold');
    assert.equal(typeof d.addresses[0]!.line, 'string');
    assert.equal(d.addresses[1]!.zip, '12345');
    assert.equal(typeof d.card, 'string', 'a marked object is encrypted whole');
    assert.equal(d.order_id, 1042);
    assert.equal(d.not_marked, 'visible');
    assert.equal(d.blank, 'visible');
    unprotect(d, SCHEMA, cipher);
    assert.deepEqual(d, data());
  });

  test('the plaintext is the JSON of the value, keys sorted, compact', () => {
    const seen: string[] = [];
    const spy: Cipher = {
      encrypt: (p) => (seen.push(Buffer.from(p).toString('utf8')), 'x'),
      decrypt: () => new Uint8Array(),
    };
    protect({ card: { z: 1, a: [true, null, 'ü'], m: { b: 2, a: 1 } } }, { properties: { card: { 'x-gdpr-sensitive': true } } }, spy);
    assert.deepEqual(seen, ['{"a":[true,null,"ü"],"m":{"a":1,"b":2},"z":1}']);
  });

  test('absent paths are skipped; non-string leaves are left alone by unprotect; a root mark touches nothing', () => {
    const d: Record<string, unknown> = { order_id: 1, profile: 'not an object', addresses: 'not an array' };
    protect(d, SCHEMA, cipher);
    assert.deepEqual(d, { order_id: 1, profile: 'not an object', addresses: 'not an array' });
    const clear: Record<string, unknown> = { email: 42 };
    unprotect(clear, SCHEMA, cipher);
    assert.deepEqual(clear, { email: 42 });
    const rooted = { a: 1 };
    protect(rooted, { 'x-gdpr-sensitive': true }, cipher);
    assert.deepEqual(rooted, { a: 1 });
  });

  test('a string the cipher cannot open is a DecryptError (wrong key, tampering, garbage, non-JSON plaintext)', () => {
    const d = data();
    protect(d, SCHEMA, cipher);
    assert.throws(() => unprotect(structuredClone(d), SCHEMA, new AesGcmCipher(Buffer.alloc(32, 8))), DecryptError);
    assert.throws(() => unprotect({ ...structuredClone(d), email: 'plain text!' }, SCHEMA, cipher), DecryptError);
    const notJson = cipher.encrypt(Buffer.from('not json'));
    assert.throws(() => unprotect({ email: notJson }, SCHEMA, cipher), (e: Error) => e instanceof DecryptError && /not JSON/.test(e.message));
    const throwing: Cipher = { encrypt: () => 'x', decrypt: () => { throw new RangeError('kms said no'); } };
    assert.throws(() => unprotect({ email: 'x' }, SCHEMA, throwing), (e: Error) => e instanceof DecryptError && e.cause instanceof RangeError);
  });
});

describe('AesGcmCipher (the reference layout)', () => {
  test('output is padded base64 of 12-byte IV ‖ ciphertext ‖ 16-byte tag, readable with plain node:crypto', () => {
    for (const size of [16, 24, 32]) {
      const key = randomBytes(size);
      const sealed = new AesGcmCipher(key).encrypt(Buffer.from('"alice"'));
      assert.match(sealed, /^[A-Za-z0-9+/]+=*$/);
      const raw = Buffer.from(sealed, 'base64');
      assert.equal(raw.length, 12 + 7 + 16);
      const d = createDecipheriv(`aes-${size * 8}-gcm` as 'aes-256-gcm', key, raw.subarray(0, 12));
      d.setAuthTag(raw.subarray(raw.length - 16));
      assert.equal(Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString(), '"alice"');
    }
  });

  test('a fresh IV per call: the same plaintext encrypts differently, both decrypt', () => {
    const c = new AesGcmCipher(KEY);
    const a = c.encrypt(Buffer.from('1'));
    const b = c.encrypt(Buffer.from('1'));
    assert.notEqual(a, b);
    assert.equal(Buffer.from(c.decrypt(a)).toString(), '1');
    assert.equal(Buffer.from(c.decrypt(b)).toString(), '1');
  });

  test('InvalidKeySizeError for any other key length', () => {
    for (const size of [0, 15, 17, 31, 33, 64]) assert.throws(() => new AesGcmCipher(Buffer.alloc(size)), InvalidKeySizeError);
    assert.throws(() => new AesGcmCipher('0123456789abcdef' as never), InvalidKeySizeError);
  });

  test('MalformedCiphertextError for non-base64, unpadded or short input; DecryptError for a flipped bit', () => {
    const c = new AesGcmCipher(KEY);
    for (const bad of ['***', 'YWJj', 'YWJjZA', Buffer.alloc(27).toString('base64')]) {
      assert.throws(() => c.decrypt(bad), MalformedCiphertextError, bad);
    }
    const raw = Buffer.from(c.encrypt(Buffer.from('"x"')), 'base64');
    raw[14]! ^= 1;
    assert.throws(() => c.decrypt(raw.toString('base64')), (e: Error) => e instanceof DecryptError && !(e instanceof MalformedCiphertextError));
    assert.ok(new MalformedCiphertextError('m') instanceof DecryptError, 'malformed is a kind of decrypt failure');
  });
});
