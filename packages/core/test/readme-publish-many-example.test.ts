import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/paths.js';

test('the README publishMany example runs and reports the failed item', () => {
  const readme = readFileSync(join(repoRoot, 'packages/core/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Publishing many at once'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
  const dir = mkdtempSync(join(repoRoot, 'packages/core/test/.readme-'));
  try {
    const file = join(dir, 'example.ts');
    writeFileSync(file, code);
    const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      cwd: repoRoot, encoding: 'utf8', env: { ...process.env, BABELQUEUE_LOG_LEVEL: 'silent' }, timeout: 120_000,
    });
    assert.deepEqual(out.trim().split('\n'), ['2 published', 'item 0 failed: refused', '3 on the queue']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
