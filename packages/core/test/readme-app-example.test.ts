import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runReadmeExample } from '../../../test/support/readme.js';

test('the README App example runs and prints what it says', async () => {
  const lines = (await runReadmeExample('core', '## The App')).trim().split('\n');
  assert.equal(lines[0], 'order 1042 attempt 1');
  assert.match(lines[1]!, /^giving up on [0-9a-f-]{36} Error: Payment gateway timeout$/);
  assert.equal(lines[2], 'failed');
});
