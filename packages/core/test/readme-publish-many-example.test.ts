import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runReadmeExample } from '../../../test/support/readme.js';

test('the README publishMany example runs and reports the failed item', async () => {
  const out = await runReadmeExample('core', '### Publishing many at once: `publishMany`');
  assert.deepEqual(out.trim().split('\n'), ['2 published', 'item 0 failed: refused', '3 on the queue']);
});
