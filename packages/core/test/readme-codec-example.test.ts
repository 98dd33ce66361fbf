import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/paths.js';

test('the README codec example runs and prints what it says', () => {
  const readme = readFileSync(join(repoRoot, 'packages/core/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The envelope codec'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
  // Run it from inside the package so `@babelqueue/core` resolves to the source.
  const dir = mkdtempSync(join(repoRoot, 'packages/core/test/.readme-'));
  try {
    const file = join(dir, 'example.ts');
    writeFileSync(file, code);
    const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    const lines = out.trim().split('\n');
    assert.equal(lines[0], 'null');
    assert.equal(lines[1], "urn:babel:orders:created { order_id: 1042 }");
    assert.match(lines[2]!, /^orders\.dlq \d+ 2000 \d+$/);
    assert.match(lines[3]!, /^\{"raw":"\/wA=","raw_encoding":"base64","dead_letter":\{"reason":"poison",/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
