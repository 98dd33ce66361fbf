import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { runReadmeExample } from '../../../test/support/readme.js';

const postgres = broker('postgres');
const table = uniqueQueue('readme_outbox').replaceAll('-', '_');

after(async () => {
  if (postgres.url === undefined) return;
  const pool = new pg.Pool({ connectionString: postgres.url });
  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.end();
});

test('the README example writes in a transaction and relays to a consumer', { skip: postgres.skip }, async () => {
  const out = await runReadmeExample('outbox', '## Use', { BABELQUEUE_POSTGRES_URL: postgres.url!, OUTBOX_TABLE: table });
  assert.equal(out, '{ published: 1, failed: 0 }\norder 1042\n');
});
