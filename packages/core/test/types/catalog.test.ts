import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

test('the URN catalog and interface payloads type-check against the shipped declarations (dist/)', () => {
  // Resolves @babelqueue/core without the `source` condition, i.e. through dist/*.d.ts.
  const result = spawnSync(process.execPath, [tsc, '-p', import.meta.dirname], { encoding: 'utf8' });
  assert.equal(result.status, 0, `tsc failed:\n${result.stdout}${result.stderr}`);
});

test('options take undefined under exactOptionalPropertyTypes, and onFailed sees the catalog\'s payload types', () => {
  const result = spawnSync(process.execPath, [tsc, '-p', join(import.meta.dirname, 'tsconfig.exact.json')], { encoding: 'utf8' });
  assert.equal(result.status, 0, `tsc failed:\n${result.stdout}${result.stderr}`);
});
