import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/paths.js';

test('the README App example runs and prints what it says', () => {
  const readme = readFileSync(join(repoRoot, 'packages/core/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The App'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
  const dir = mkdtempSync(join(repoRoot, 'packages/core/test/.readme-'));
  try {
    const file = join(dir, 'example.ts');
    writeFileSync(file, code);
    const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      cwd: repoRoot, encoding: 'utf8', env: { ...process.env, BABELQUEUE_LOG_LEVEL: 'silent' }, timeout: 120_000,
    });
    const lines = out.trim().split('\n');
    assert.equal(lines[0], 'order 1042 attempt 1');
    assert.match(lines[1]!, /^giving up on [0-9a-f-]{36} Error: Payment gateway timeout$/);
    assert.equal(lines[2], 'failed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
