import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runReadmeExample } from '../../../test/support/readme.js';

test('the README codec example runs and prints what it says', async () => {
  const lines = (await runReadmeExample('core', '## The envelope codec')).trim().split('\n');
  assert.equal(lines[0], 'null');
  assert.equal(lines[1], "urn:babel:orders:created { order_id: 1042 }");
  assert.match(lines[2]!, /^orders\.dlq \d+ 2000 \d+$/);
  assert.match(lines[3]!, /^\{"raw":"\/wA=","raw_encoding":"base64","dead_letter":\{"reason":"poison",/);
});
