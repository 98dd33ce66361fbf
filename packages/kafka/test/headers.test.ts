import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { projectKafka } from '@babelqueue/core';
import { kafkaAttempts, kafkaSchemaVersion } from '../src/index.js';
import { deliveryHeaders, editHeaders, headerText } from '../src/projection.js';

const b = (s: string) => Buffer.from(s, 'utf8');

// The public conformance manifest, when it sits beside the repository (never copied in).
const manifestPath = join(process.cwd(), '..', 'shared', 'conformance', 'manifest.json');
const manifest = existsSync(manifestPath)
  ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      kafka: { attempts_reconciliation: { cases: { name: string; body_attempts: number; header_attempts: number | null; expected_attempts: number }[] } };
    })
  : undefined;

// Our own rows cover the same ground as the manifest's attempts_reconciliation cases.
const reconciliation: { name: string; body: number; header: string | null | undefined | (string | Buffer)[]; expected: number }[] = [
  { name: 'header matches body', body: 0, header: '0', expected: 0 },
  { name: 'header present', body: 0, header: '2', expected: 2 },
  { name: 'header absent falls back to the body', body: 3, header: undefined, expected: 3 },
  { name: 'header authoritative even when lower (not a max)', body: 5, header: '1', expected: 1 },
  { name: 'header higher than body', body: 1, header: '4', expected: 4 },
  { name: 'null-valued header counts as absent', body: 2, header: null, expected: 2 },
  { name: 'blank header counts as absent', body: 2, header: '  ', expected: 2 },
  { name: 'non-numeric header counts as absent', body: 2, header: 'three', expected: 2 },
  { name: 'repeated header: the last value counts', body: 0, header: ['1', '6'], expected: 6 },
  { name: 'leading zeros read as the number', body: 0, header: '007', expected: 7 },
  { name: 'surrounding blanks are trimmed', body: 0, header: ' 3 ', expected: 3 },
  { name: 'fifteen digits', body: 0, header: '999999999999999', expected: 999_999_999_999_999 },
  { name: 'beyond a safe integer counts as absent', body: 2, header: '99999999999999999999', expected: 2 },
  { name: 'a sign is not a count', body: 2, header: '-1', expected: 2 },
  { name: 'digits then text count as absent', body: 2, header: '3x', expected: 2 },
];

describe('Kafka attempts reconciliation', () => {
  for (const row of reconciliation) {
    it(row.name, () => {
      const headers = row.header === undefined ? {} : { 'bq-attempts': (Array.isArray(row.header) ? row.header.map((h) => b(String(h))) : row.header === null ? null : b(row.header)) as Buffer };
      assert.equal(kafkaAttempts(headers, row.body), row.expected);
    });
  }

  it('matches every case of the public conformance manifest', { skip: manifest === undefined && 'shared/conformance not present' }, () => {
    for (const c of manifest!.kafka.attempts_reconciliation.cases) {
      const headers = c.header_attempts === null ? {} : { 'bq-attempts': b(String(c.header_attempts)) };
      assert.equal(kafkaAttempts(headers, c.body_attempts), c.expected_attempts, c.name);
    }
  });
});

describe('Kafka version gate value', () => {
  const rows: [string, Buffer | null | undefined | Buffer[], string | undefined][] = [
    ['absent', undefined, undefined],
    ['null-valued', null, undefined],
    ['blank', b('   '), undefined],
    ['"1"', b('1'), '1'],
    ['tab-only blank', b('\t'), undefined],
    ['" 1" kept untrimmed (gated)', b(' 1'), ' 1'],
    ['"2"', b('2'), '2'],
    ['" 2 " kept untrimmed', b(' 2 '), ' 2 '],
    ['a no-break space is not blank', b('\u00a0'), '\u00a0'],
    ['"1.0" kept as text (gated)', b('1.0'), '1.0'],
    ['repeated: last wins', [b('1'), b('2')], '2'],
  ];
  for (const [name, value, expected] of rows) {
    it(name, () => {
      const headers = value === undefined ? {} : { 'bq-schema-version': value as Buffer };
      assert.equal(kafkaSchemaVersion(headers), expected);
    });
  }
});

describe('Kafka header helpers', () => {
  it('reads header text: last of a repeat, null for a null value, undefined when absent', () => {
    const headers = { a: b('x'), r: [b('1'), b('2')], n: null as unknown as Buffer };
    assert.equal(headerText(headers, 'a'), 'x');
    assert.equal(headerText(headers, 'r'), '2');
    assert.equal(headerText(headers, 'n'), null);
    assert.equal(headerText(headers, 'missing'), undefined);
    assert.deepEqual(deliveryHeaders(headers), { a: 'x', r: '2', n: null });
  });

  it('edits headers surgically: set, drop, every other value kept as the same bytes', () => {
    const trace = b('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const nul = null as unknown as Buffer;
    const raw = { traceparent: trace, 'bq-attempts': b('1'), 'bq-delay': b('500'), dup: [b('a'), b('b')], nul, mixed: [nul, b('m')] };
    const out = editHeaders(raw, { 'bq-attempts': '2' }, ['bq-delay']);
    assert.equal(out.traceparent, trace);
    assert.deepEqual(out.dup, [b('a'), b('b')]);
    assert.equal('nul' in out, false, 'a null-valued header is left out (kafkajs cannot write one; it reads as absent)');
    assert.deepEqual(out.mixed, [b('m')]);
    assert.equal(out['bq-attempts'], '2');
    assert.equal('bq-delay' in out, false);
  });

  it('projects the contract headers as strings, riders beside them, the contract winning', () => {
    const p = projectKafka(
      { urn: 'urn:babel:orders:created', traceId: 't', messageId: 'm', schemaVersion: 1, lang: 'node', createdAt: 1749132727000, attempts: 0 },
      { traceparent: 'tp', 'bq-job': 'evil', 'bq-delay': 'x', ' ': 'blank' },
    );
    assert.deepEqual(p.headers, {
      'bq-job': 'urn:babel:orders:created',
      'bq-trace-id': 't',
      'bq-message-id': 'm',
      'bq-schema-version': '1',
      'bq-source-lang': 'node',
      'bq-attempts': '0',
      traceparent: 'tp',
    });
    assert.equal(p.timestamp, '1749132727000');
  });
});
