import assert from 'node:assert/strict';
import { test } from 'node:test';
import { broker } from '../../../test/support/brokers.js';
import { runReadmeExample } from '../../../test/support/readme.js';

const redis = broker('redis');
const postgres = broker('postgres');

test('the README example dedupes redeliveries on real Redis and PostgreSQL', { skip: redis.skip || postgres.skip }, async () => {
  const out = await runReadmeExample('idempotency', '## Use', {
    BABELQUEUE_REDIS_URL: redis.url!,
    BABELQUEUE_POSTGRES_URL: postgres.url!,
  });
  assert.equal(out, '4 deliveries, charged 2 times\n');
});
