import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dlqName } from '@babelqueue/core';
import { sqsDlqName } from '@babelqueue/core/binding';

describe('DLQ names', () => {
  const dlq: [string, Parameters<typeof dlqName>[1], string][] = [
    ['orders', undefined, 'orders.dlq'],
    ['orders', {}, 'orders.dlq'],
    ['orders', { suffix: '-dead' }, 'orders-dead'],
    ['orders', { queue: 'triage' }, 'triage'],
    ['orders', { queue: 'triage', suffix: '-dead' }, 'triage'],
    ['orders', { queue: '  ' }, 'orders.dlq'],
    ['orders', { queue: null, suffix: null }, 'orders.dlq'],
    ['{orders}', undefined, '{orders}.dlq'],
  ];
  for (const [queue, options, expected] of dlq) {
    test(`dlqName(${queue}, ${JSON.stringify(options)}) = ${expected}`, () => assert.equal(dlqName(queue, options), expected));
  }

  const sqs: [string, Parameters<typeof sqsDlqName>[1], string][] = [
    ['orders', undefined, 'orders-dlq'],
    ['orders.fifo', undefined, 'orders-dlq.fifo'],
    ['orders.fifo', { suffix: '-dlq' }, 'orders-dlq.fifo'],
    ['orders.fifo', { suffix: '_dead' }, 'orders_dead.fifo'],
    ['orders', { suffix: '_dead' }, 'orders_dead'],
    ['orders.fifo', { queue: 'https://sqs.local/1/triage.fifo' }, 'https://sqs.local/1/triage.fifo'],
  ];
  for (const [queue, options, expected] of sqs) {
    test(`sqsDlqName(${queue}, ${JSON.stringify(options)}) = ${expected}`, () => assert.equal(sqsDlqName(queue, options), expected));
  }
});
