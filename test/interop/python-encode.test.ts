// Producer parity with the official Python SDK: for the same inputs, its
// EnvelopeCodec.make + encode and ours write the same bytes. The fields no two
// makes share (meta.id, meta.created_at, meta.lang, and a minted trace_id) are
// handed from our envelope to the Python one before it is encoded (FACTS §1,
// "producer parity"); the key order stays each SDK's own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, type JsonObject } from '@babelqueue/core';
import { bytes, pythonPeer } from './support/python-peer.js';

const peer = pythonPeer('python-encode');

interface Case {
  name: string;
  urn: string;
  data: JsonObject;
  queue?: string;
  traceId?: string;
}

const CASES: Case[] = [
  { name: 'plain ASCII, default queue', urn: 'urn:babel:orders:created', data: { order_id: 1042 } },
  { name: 'named queue and inherited trace id', urn: 'urn:babel:orders:created', data: { order_id: 1 }, queue: 'orders', traceId: 'trace-123' },
  { name: 'URN and trace id trimmed of ASCII whitespace', urn: ' \turn:babel:orders:created\n ', data: {}, traceId: '  4bf92f35-77b3-4da6-a3ce-929d0e0e4736\t' },
  { name: 'empty data', urn: 'urn:babel:x:empty', data: {} },
  { name: 'non-ASCII stays raw UTF-8', urn: 'urn:babel:i18n:greeting', data: { fr: 'héllo', zh: '你好', emoji: '😀🚀', mixed: 'naïve café' } },
  { name: 'slashes and HTML characters are not escaped', urn: 'urn:babel:web:link', data: { url: 'https://example.com/a/b?c=1&d=2', html: '<b>"x" & \'y\'</b>' } },
  { name: 'quotes, backslashes and short escapes', urn: 'urn:babel:esc:short', data: { s: 'a"b\\c\b\f\n\r\t' } },
  { name: 'other control characters as lowercase \\u00XX; DEL raw', urn: 'urn:babel:esc:ctl', data: { s: '\u0000\u0001\u001f\u000b\u007f' } },
  { name: 'U+2028 and U+2029 raw in both', urn: 'urn:babel:esc:ls', data: { s: 'line\u2028para\u2029end' } },
  { name: 'integers, negative and fractional numbers', urn: 'urn:babel:num:mix', data: { zero: 0, neg: -17, big: 9007199254740991, half: 0.5, q: -2.25, pi: 3.141592653589793 } },
  { name: 'booleans, null, nested arrays and objects in producer order', urn: 'urn:babel:nest:deep', data: { z: true, a: false, n: null, list: [1, 'two', [3, { four: 4 }], []], obj: { b: { c: {} }, a: [] } } },
  { name: 'keys needing escapes', urn: 'urn:babel:keys:odd', data: { 'with "quote"': 1, 'tab\tkey': 2, 'ünï': 3, '': 4 } },
];

describe('interop: byte-identical envelopes with the Python SDK', { skip: peer.skip }, () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const ours = EnvelopeCodec.make(c.urn, c.data, {
        ...(c.queue !== undefined ? { queue: c.queue } : {}),
        ...(c.traceId !== undefined ? { traceId: c.traceId } : {}),
      });
      const ourBytes = Buffer.from(EnvelopeCodec.encode(ours), 'utf8');
      const request = {
        urn: c.urn,
        data: c.data,
        queue: c.queue ?? 'default',
        trace_id: c.traceId ?? ours.trace_id,
        meta: { id: ours.meta.id, created_at: ours.meta.created_at, lang: ours.meta.lang },
      };
      const { body } = await peer.run(['encode'], JSON.stringify(request));
      const theirBytes = bytes(body);
      assert.equal(theirBytes.toString('utf8'), ourBytes.toString('utf8'));
      assert.ok(theirBytes.equals(ourBytes), 'identical bytes');
    });
  }
});
