import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/paths.js';

test('the README reconnect back-off example runs and prints what it says', () => {
  const readme = readFileSync(join(repoRoot, 'packages/core/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## For binding authors: reconnect back-off and pause'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
  // Run it from inside the package so `@babelqueue/core` resolves to the source.
  const dir = mkdtempSync(join(repoRoot, 'packages/core/test/.readme-'));
  try {
    const file = join(dir, 'example.ts');
    writeFileSync(file, code);
    const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    assert.deepEqual(out.trim().split('\n'), ['100 200 400 800 1000', 'false']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
