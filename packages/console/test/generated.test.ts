import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

test('src/assets.generated.ts matches web/ (run `npm run generate -w packages/console` after editing the page)', () => {
  const script = join(import.meta.dirname, '..', 'scripts', 'generate.mjs');
  const result = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
});
