import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artemis, artemisUrl, Raw, uniqueQueue } from './support/artemis.js';

const pkg = join(import.meta.dirname, '..');

describe('README', { skip: artemis.skip }, () => {
  let raw: Raw;
  const queue = uniqueQueue('bq-art-readme');
  before(async () => {
    raw = await Raw.open();
  });
  after(async () => {
    await raw.cleanup(queue, `${queue}.dlq`);
    await raw.close();
  });

  it('the example runs and prints what it says', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const code = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    try {
      const file = join(dir, 'example.ts');
      writeFileSync(file, code);
      const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
        encoding: 'utf8',
        env: { ...process.env, ARTEMIS_URL: artemisUrl(), QUEUE: queue, BABELQUEUE_LOG_LEVEL: 'silent' },
        timeout: 60_000,
      });
      assert.deepEqual(out.trim().split('\n'), ['order 1042 attempt 1', 'order 1043 attempt 1']);
      await raw.waitForCount(queue, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
