import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runReadmeExample } from '../../../test/support/readme.js';

test('the README reconnect back-off example runs and prints what it says', async () => {
  const out = await runReadmeExample('core', '## For binding authors: reconnect back-off and pause');
  assert.deepEqual(out.trim().split('\n'), ['100 200 400 800 1000', 'false']);
});
