import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type OutgoingMessage } from '@babelqueue/core';
import { indexesByQueue, outcomesOf } from '@babelqueue/core/binding';

const message = (messageId: string): OutgoingMessage => ({
  body: Buffer.from('{}'),
  queue: 'q',
  projection: { urn: 'urn:babel:t:x', traceId: 't', messageId, schemaVersion: 1, lang: 'ts', createdAt: 0, attempts: 0 },
});

describe('outcomesOf', () => {
  it('gives each message ok where its failure is undefined, else the reason as an Error, in order', () => {
    const refused = new Error('refused');
    const outcomes = outcomesOf([message('a'), message('b'), message('c')], [undefined, refused, 'gone']);
    assert.deepEqual(outcomes.map((o) => [o.messageId, o.ok]), [['a', true], ['b', false], ['c', false]]);
    assert.equal(!outcomes[1]!.ok && outcomes[1]!.error, refused, 'an Error is kept as it is');
    assert.ok(!outcomes[2]!.ok && outcomes[2]!.error instanceof Error && outcomes[2]!.error.message === 'gone', 'a non-Error reason becomes an Error');
  });
});

describe('indexesByQueue', () => {
  it('groups the indexes by queue, each group in message order, queues in first-seen order', () => {
    const on = (queue: string): OutgoingMessage => ({ ...message(queue), queue });
    const groups = indexesByQueue([on('b'), on('a'), on('b'), on('c'), on('a')]);
    assert.deepEqual([...groups], [['b', [0, 2]], ['a', [1, 4]], ['c', [3]]]);
  });
});
