import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asb, configureQueue, Raw, uniqueQueue } from './support/lab.js';

const pkg = join(import.meta.dirname, '..');

describe('README', { skip: asb.skip }, () => {
  it('the example runs against the lab and prints what it says', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const code = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const queue = uniqueQueue('bq-asb-readme');
    await configureQueue(asb.url!, queue);
    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    const raw = new Raw(asb.url!);
    try {
      const file = join(dir, 'example.ts');
      writeFileSync(file, code);
      const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
        encoding: 'utf8',
        env: { ...process.env, ASB_CONNECTION_STRING: asb.url!, ASB_QUEUE: queue, BABELQUEUE_LOG_LEVEL: 'silent' },
      });
      assert.deepEqual(out.trim().split('\n'), ['order 1042 attempt 1', 'order 1043 attempt 1']);
      assert.deepEqual(await raw.drain(queue, { waitMs: 300 }), [], 'nothing left behind');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await raw.close();
    }
  });
});
