import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { frameValue, unframe, usableHeaders } from '../src/projection.js';

const body = Buffer.from('{"job":"urn:babel:orders:created","trace_id":"t","data":{"s":"é/<>"},"meta":{},"attempts":0}');
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('__bq_frame', () => {
  it('writes __bq_frame, headers, body in that order with the body as a JSON string', () => {
    const value = frameValue(body, { traceparent: TP });
    assert.equal(value.toString(), `{"__bq_frame":1,"headers":{"traceparent":"${TP}"},"body":${JSON.stringify(body.toString())}}`);
  });

  it('pushes the bare envelope byte-for-byte when no usable header remains', () => {
    assert.equal(frameValue(body, undefined), body);
    assert.equal(frameValue(body, {}), body);
    assert.equal(frameValue(body, { '': 'x', ' ': 'y', tracestate: '', k: '  ' }), body);
  });

  it('drops blank keys and values', () => {
    assert.deepEqual(usableHeaders({ traceparent: TP, '': 'x', tracestate: ' ' }), { traceparent: TP });
  });

  it('reads a frame back: the inner body bytes and the headers', () => {
    const read = unframe(frameValue(body, { traceparent: TP, 'bq-replay-bypass': '1' }));
    assert.equal(read.framed, true);
    assert.deepEqual(read.body, body);
    assert.deepEqual(read.headers, { traceparent: TP, 'bq-replay-bypass': '1' });
  });

  const notFrames: [string, string | Buffer][] = [
    ['a bare envelope', body],
    ['a value not starting with {', ' {"__bq_frame":1,"headers":{},"body":"x"}'],
    ['a frame that does not parse', '{"__bq_frame":1,"body":"x"'],
    ['a falsy __bq_frame', '{"__bq_frame":0,"headers":{},"body":"x"}'],
    ['a body that is not a string', '{"__bq_frame":1,"headers":{},"body":{"job":"x"}}'],
    ['an array', '[{"__bq_frame":1}]'],
    ['invalid UTF-8', Buffer.concat([Buffer.from('{"__bq_frame":1,"body":"'), Buffer.from([0xff]), Buffer.from('"}')])],
    ['a body merely mentioning the marker', '{"job":"u","data":{"note":"\\"__bq_frame\\""},"attempts":0}'],
  ];
  for (const [what, value] of notFrames) {
    it(`treats ${what} as a bare body with no headers`, () => {
      const raw = Buffer.isBuffer(value) ? value : Buffer.from(value);
      const read = unframe(raw);
      assert.equal(read.framed, false);
      assert.equal(read.body, raw);
      assert.deepEqual(read.headers, {});
    });
  }

  it('keeps only string header values of a frame written by another SDK', () => {
    const read = unframe(Buffer.from('{"__bq_frame":true,"headers":{"a":"1","b":2},"body":"{}"}'));
    assert.deepEqual(read.headers, { a: '1' });
    assert.deepEqual(read.body, Buffer.from('{}'));
  });
});
