import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  reconcileArtemisAttempts,
  reconcileAsbAttempts,
  reconcileJmsAttempts,
  reconcileKafkaAttempts,
  reconcilePulsarAttempts,
  reconcileSqsAttempts,
  type BodyAttempts,
  type NativeCount,
} from '@babelqueue/core/binding';
import { suites, type Manifest } from './suite.js';

/** Per manifest block: the native count field its cases carry and the function under test. */
const BLOCKS: { block: keyof Manifest; field: string; reconcile: (body: BodyAttempts, count: NativeCount) => number }[] = [
  { block: 'sqs', field: 'approximate_receive_count', reconcile: reconcileSqsAttempts },
  { block: 'asb', field: 'delivery_count', reconcile: reconcileAsbAttempts },
  { block: 'pulsar', field: 'redelivery_count', reconcile: reconcilePulsarAttempts },
  {
    block: 'kafka',
    field: 'header_attempts',
    // Kafka header values are bytes on the wire: the manifest's numbers arrive as UTF-8.
    reconcile: (body, count) =>
      reconcileKafkaAttempts(body, count === null || count === undefined ? count : Buffer.from(String(count), 'utf8')),
  },
  { block: 'artemis', field: 'delivery_count', reconcile: reconcileArtemisAttempts },
  { block: 'jms', field: 'jmsx_delivery_count', reconcile: reconcileJmsAttempts },
];

for (const { suite, name, skip } of suites) {
  describe(`conformance attempts reconciliation: ${name}`, { skip }, () => {
    for (const { block, field, reconcile } of BLOCKS) {
      const section = suite?.manifest[block] as { attempts_reconciliation?: { cases: Record<string, unknown>[] } } | undefined;
      for (const c of section?.attempts_reconciliation?.cases ?? []) {
        test(`${block}: ${String(c.name)}`, () => {
          const count = c[field] as NativeCount;
          const body = c.body_attempts as number;
          assert.equal(reconcile(body, count), c.expected_attempts);
          // The envelope form of the body gives the same answer.
          assert.equal(reconcile({ attempts: body }, count), c.expected_attempts);
        });
      }
    }
  });
}
