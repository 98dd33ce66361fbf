import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { readmeExample } from '../../../test/support/readme.js';
import { repoRoot } from './support/paths.js';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

test('the README typed-payload example type-checks (strict) and runs', () => {
  const code = readmeExample('core', '### Typed payloads: `handle<T>()` and a URN catalog');
  const dir = mkdtempSync(join(repoRoot, 'packages/core/test/.readme-'));
  try {
    writeFileSync(join(dir, 'example.ts'), code);
    // The commented-out lines are the ones that must not compile: check that too.
    const wrong = code.replace(/^\/\/ (typed\.publish\(.*\);)\s*\/\/ error.*$/gm, '// @ts-expect-error\n$1');
    assert.notEqual(wrong, code);
    writeFileSync(join(dir, 'errors.ts'), `${wrong}\nexport {};\n`);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      extends: '../../../../tsconfig.base.json',
      compilerOptions: { noEmit: true, module: 'NodeNext', target: 'ES2022' },
      files: ['example.ts', 'errors.ts'],
    }));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const checked = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    assert.equal(checked.status, 0, `tsc:\n${checked.stdout}${checked.stderr}`);
    const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', join(dir, 'example.ts')], {
      cwd: repoRoot, encoding: 'utf8', env: { ...process.env, BABELQUEUE_LOG_LEVEL: 'silent' },
    });
    assert.deepEqual(out.trim().split('\n'), ['dhl 1']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
