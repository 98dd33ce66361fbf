// GDPR field protection across languages: the Python SDK's babelqueue.gdpr with
// the reference AES-GCM layout (cryptography's AESGCM) and @babelqueue/gdpr.
// No broker: the protected data is what an envelope would carry.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { AesGcmCipher, DecryptError, protect, unprotect } from '@babelqueue/gdpr';
import { pythonPeer } from './support/python-peer.js';

const peer = pythonPeer('gdpr (Python SDK)');
const KEY = randomBytes(32);

const SCHEMA = {
  type: 'object',
  properties: {
    email: { type: 'string', 'x-gdpr-sensitive': 'email' },
    profile: { type: 'object', properties: { full_name: { 'x-gdpr-sensitive': true }, tier: { type: 'string' } } },
    addresses: { type: 'array', items: { type: 'object', properties: { line: { 'x-gdpr-sensitive': 'address' } } } },
    card: { type: 'object', 'x-gdpr-sensitive': 'payment' },
    tags: { type: 'array', items: { 'x-gdpr-sensitive': true } },
  },
};
const DATA = {
  order_id: 1042,
  email: 'zoë@example.com',
  profile: { full_name: 'Zoë “Ådams” 🚀', tier: 'gold' },
  addresses: [{ line: '1 Main St' }, { line: '2 Side Rd', zip: '12345' }],
  card: { pan: '4242424242424242', exp: { m: 12, y: 2030 }, cvc: null, ok: true, limit: 0.5 },
  tags: ['a', 7, { b: [1, 2] }],
};

const python = (action: 'protect' | 'unprotect', data: unknown) =>
  peer.run(['gdpr', action], JSON.stringify({ key: KEY.toString('base64'), schema: SCHEMA, data }));

function tamper(sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  raw[raw.length - 20]! ^= 0x01;
  return raw.toString('base64');
}

describe('GDPR interop: Python babelqueue.gdpr <-> @babelqueue/gdpr', { skip: peer.skip }, () => {
  it('a field Python encrypts decrypts in Node to the same JSON value', async () => {
    const { data } = await python('protect', structuredClone(DATA));
    assert.equal(typeof data.email, 'string');
    assert.equal(typeof data.card, 'string');
    assert.equal(data.profile.tier, 'gold');
    unprotect(data, SCHEMA, new AesGcmCipher(KEY));
    assert.deepEqual(data, DATA);
  });

  it('a field Node encrypts decrypts in Python to the same JSON value', async () => {
    const data = structuredClone(DATA) as Record<string, unknown>;
    protect(data, SCHEMA, new AesGcmCipher(KEY));
    const back = await python('unprotect', data);
    assert.deepEqual(back.data, DATA);
  });

  it('a tampered ciphertext is a DecryptError on both sides', async () => {
    const fromPython = (await python('protect', structuredClone(DATA))).data;
    fromPython.email = tamper(fromPython.email);
    assert.throws(() => unprotect(fromPython, SCHEMA, new AesGcmCipher(KEY)), DecryptError);

    const fromNode = structuredClone(DATA) as Record<string, any>;
    protect(fromNode, SCHEMA, new AesGcmCipher(KEY));
    fromNode.profile.full_name = tamper(fromNode.profile.full_name);
    const answer = await python('unprotect', fromNode);
    assert.equal(answer.error, 'DecryptError');
  });
});
