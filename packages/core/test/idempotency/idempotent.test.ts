import { test } from 'node:test';
import assert from 'node:assert/strict';
import { idempotent, type IdempotencyStore } from '@babelqueue/core';

test('an asynchronous store, the handler result, and a skipped delivery resolving undefined', async () => {
  const ids = new Set<string>();
  const store: IdempotencyStore = {
    seen: async (id) => ids.has(id),
    remember: async (id) => void ids.add(id),
    forget: async (id) => void ids.delete(id),
  };
  const handler = idempotent(async (data: { n: number }) => data.n * 2, store);
  assert.equal(await handler({ n: 21 }, { id: 'a' }), 42);
  assert.equal(await handler({ n: 21 }, { id: 'a' }), undefined);
  assert.deepEqual([...ids], ['a']);
});

test('a missing or non-string id fails open and is never remembered', async () => {
  let runs = 0;
  const remembered: string[] = [];
  const store: IdempotencyStore = { seen: () => false, remember: (id) => void remembered.push(id), forget: () => {} };
  const handler = idempotent(() => runs++, store);
  await handler({}, { id: undefined as unknown as string });
  await handler({}, { id: 7 as unknown as string });
  assert.equal(runs, 2);
  assert.deepEqual(remembered, []);
});

test('a store that fails to remember surfaces the error (the message is retried, never silently lost)', async () => {
  const store: IdempotencyStore = { seen: () => false, remember: () => Promise.reject(new Error('store down')), forget: () => {} };
  await assert.rejects(idempotent(() => 'ok', store)({}, { id: 'a' }), /store down/);
});
