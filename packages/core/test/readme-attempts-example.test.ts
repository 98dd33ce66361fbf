import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runReadmeExample } from '../../../test/support/readme.js';

test('the README attempts example runs and prints what it says', async () => {
  const out = await runReadmeExample('core', '## For binding authors: attempts, delay advice and close');
  assert.deepEqual(out.trim().split('\n'), ['2', '2']);
});
