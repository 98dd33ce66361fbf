import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runReadmeExample } from '../../../test/support/readme.js';

test('the README example runs and prints what the README says', async () => {
  const out = await runReadmeExample('gdpr', '## Use');
  assert.equal(out, 'email (email), shipping[].line (address)\nno cleartext on the wire\nalice@example.com 1 Main St\nDecryptError\n');
});
