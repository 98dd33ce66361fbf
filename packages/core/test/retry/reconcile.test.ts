import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bodyAttempts,
  reconcileArtemisAttempts,
  reconcileAsbAttempts,
  reconcileKafkaAttempts,
  reconcilePulsarAttempts,
  reconcileSqsAttempts,
} from '@babelqueue/core/binding';

// The conformance tables cover the rules; these cover the input shapes clients hand over.
describe('attempts reconciliation inputs', () => {
  test('the body side: a number, an envelope, or anything else as 0', () => {
    assert.equal(bodyAttempts(3), 3);
    assert.equal(bodyAttempts({ attempts: 4 }), 4);
    assert.equal(bodyAttempts({ attempts: '4' }), 0);
    assert.equal(bodyAttempts({ attempts: 1.5 }), 0);
    assert.equal(bodyAttempts({}), 0);
    assert.equal(bodyAttempts(Number.NaN), 0);
  });

  test('native counts as numbers, numeric strings and BigInts; anything else is ignored', () => {
    assert.equal(reconcileAsbAttempts(0, 3n), 2);
    assert.equal(reconcilePulsarAttempts(0, '2'), 2);
    assert.equal(reconcileArtemisAttempts(1, 2.5), 1);
    assert.equal(reconcileArtemisAttempts(1, -4), 1);
    assert.equal(reconcileSqsAttempts(1, -5n), 1);
    assert.equal(reconcileSqsAttempts(1, 2n ** 60n), 1);
    assert.equal(reconcileSqsAttempts(1, '1e3'), 1);
    assert.equal(reconcileSqsAttempts(1, undefined), 1);
  });

  test('Kafka: a Buffer, a string, a repeated header (last wins), null and absent', () => {
    assert.equal(reconcileKafkaAttempts(5, Buffer.from('2')), 2);
    assert.equal(reconcileKafkaAttempts(5, '3'), 3);
    assert.equal(reconcileKafkaAttempts(5, [Buffer.from('1'), '4']), 4);
    assert.equal(reconcileKafkaAttempts(5, []), 5);
    assert.equal(reconcileKafkaAttempts(5, null), 5);
    assert.equal(reconcileKafkaAttempts({ attempts: 6 }, undefined), 6);
    assert.equal(reconcileKafkaAttempts(5, Buffer.from('-1')), 5);
  });
});
