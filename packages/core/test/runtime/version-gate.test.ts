import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createApp, InMemoryTransport, silentLogger } from '@babelqueue/core';
import { isVersionGated, nativeSchemaVersion } from '@babelqueue/core/binding';

const URN = 'urn:babel:orders:created';

/**
 * The version gate's one rule (seed 000; the Python SDK 1.24.0 reads it the
 * same way): absent, null or blank (empty or ASCII whitespace only) → the body
 * is decoded; exactly "1" passes; anything else is gated, untrimmed.
 */
const rows: { what: string; value: unknown; expect: 'pass' | 'decode' | 'gated' }[] = [
  { what: '"1"', value: '1', expect: 'pass' },
  { what: '" 1 " (never trimmed)', value: ' 1 ', expect: 'gated' },
  { what: '"1 "', value: '1 ', expect: 'gated' },
  { what: '"\\t1"', value: '\t1', expect: 'gated' },
  { what: '"\\u00a0" (a no-break space is not blank)', value: '\u00a0', expect: 'gated' },
  { what: '"\\u2028" (not ASCII whitespace)', value: '\u2028', expect: 'gated' },
  { what: '"1\\u00a0"', value: '1\u00a0', expect: 'gated' },
  { what: '"" (blank)', value: '', expect: 'decode' },
  { what: '" " (blank)', value: ' ', expect: 'decode' },
  { what: '"\\t" (blank)', value: '\t', expect: 'decode' },
  { what: '" \\t\\n\\v\\f\\r" (blank)', value: ' \t\n\v\f\r', expect: 'decode' },
  { what: 'absent', value: undefined, expect: 'decode' },
  { what: 'null', value: null, expect: 'decode' },
  { what: '"2"', value: '2', expect: 'gated' },
  { what: '"1.0"', value: '1.0', expect: 'gated' },
  { what: '"01"', value: '01', expect: 'gated' },
  { what: '"+1"', value: '+1', expect: 'gated' },
  // Service Bus: an AMQP-typed integral 1 passes; JavaScript reads a float 1.0 as the same number.
  { what: 'the number 1 (AMQP integer)', value: 1, expect: 'pass' },
  { what: 'the BigInt 1 (AMQP long)', value: 1n, expect: 'pass' },
  { what: 'the number 1.5', value: 1.5, expect: 'gated' },
  { what: 'the number 2', value: 2, expect: 'gated' },
  { what: 'true', value: true, expect: 'gated' },
  // Kafka: header bytes read as UTF-8, untrimmed.
  { what: 'bytes "1"', value: Buffer.from('1'), expect: 'pass' },
  { what: 'bytes " 1"', value: Buffer.from(' 1'), expect: 'gated' },
  { what: 'bytes "" (blank)', value: Buffer.from(''), expect: 'decode' },
];

const verdictOf = (value: unknown): 'pass' | 'decode' | 'gated' => {
  const version = nativeSchemaVersion(value);
  if (isVersionGated(version)) return 'gated';
  return version === undefined ? 'decode' : 'pass';
};

describe('version gate: the one core rule', () => {
  for (const row of rows) {
    test(`${row.what} → ${row.expect}`, () => assert.equal(verdictOf(row.value), row.expect));
  }

  test('a raw string handed straight to isVersionGated reads the same way', () => {
    for (const row of rows) {
      if (typeof row.value !== 'string') continue;
      assert.equal(isVersionGated(row.value), row.expect === 'gated', row.what);
    }
  });
});

describe('version gate end to end on the in-memory transport', () => {
  // Every value the in-memory broker can carry as a header (strings, numbers, booleans, null).
  const carried = rows.filter((row) => row.value === undefined || row.value === null || ['string', 'number', 'boolean'].includes(typeof row.value));
  for (const row of carried) {
    test(`bq-schema-version ${row.what}: ${row.expect === 'gated' ? 'raw to the DLQ, no handler' : 'handled'}`, async () => {
      const transport = new InMemoryTransport();
      const app = createApp({ transport, queue: 'orders', deadLetter: true, logger: silentLogger });
      let handled = 0;
      app.handle(URN, () => void handled++);
      await app.publish(URN, { n: 1 });
      const [body] = transport.messages('orders');
      transport.broker.purge('orders');
      const headers: Record<string, string> = row.value === undefined ? {} : { 'bq-schema-version': row.value as string };
      // Past publishRaw's string signature: the in-memory broker keeps typed header values as given.
      await transport.publishRaw('orders', body!, headers);
      assert.equal(await app.consume({ idleMs: 50 }), 1);
      if (row.expect === 'gated') {
        assert.equal(handled, 0);
        assert.deepEqual(transport.messages('orders.dlq'), [body], 'the raw body, byte for byte');
      } else {
        assert.equal(handled, 1);
        assert.deepEqual(transport.messages('orders.dlq'), []);
      }
    });
  }
});
