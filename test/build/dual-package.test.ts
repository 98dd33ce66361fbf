/**
 * The published shape: every package loads with `require` (CJS) and `import`
 * (ESM) from its built dist/, with types beside. Runs on the build that
 * `npm ci` (prepare) or `npm run build` made; under CI a missing build fails.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PACKAGES as packages, SUBPATH_ENTRIES } from '../support/packages.js';

const root = join(import.meta.dirname, '../..');
const built = packages.every(([, dir]) => existsSync(join(root, 'packages', dir, 'dist/cjs/index.js')));
if (!built && process.env.CI === 'true') throw new Error('packages are not built: npm ci (prepare) or npm run build');
const skip = built ? false : 'SKIPPED (not built): run npm run build';
if (skip) process.stderr.write(`\n*** ${skip} ***\n\n`);

describe('dual ESM + CJS packages with types', { skip }, () => {
  for (const [name, dir, symbol] of packages) {
    test(name, () => {
      // A plain node without the "source" condition resolves the built files.
      const cjs = execFileSync(process.execPath, ['-e', `process.stdout.write(typeof require(${JSON.stringify(name)}).${symbol})`], { cwd: root, encoding: 'utf8', timeout: 60_000 });
      const esm = execFileSync(process.execPath, ['--input-type=module', '-e', `import * as m from ${JSON.stringify(name)}; process.stdout.write(typeof m.${symbol})`], { cwd: root, encoding: 'utf8', timeout: 60_000 });
      assert.equal(cjs, 'function');
      assert.equal(esm, 'function');
      assert.ok(existsSync(join(root, 'packages', dir, 'dist/esm/index.d.ts')), "existsSync(join(root, 'packages', dir, 'dist/esm/index.d.ts'))");
      assert.ok(existsSync(join(root, 'packages', dir, 'dist/cjs/index.d.ts')), "existsSync(join(root, 'packages', dir, 'dist/cjs/index.d.ts'))");
    });
  }
  for (const [name, dir, file, symbol] of SUBPATH_ENTRIES) {
    test(`${name} (subpath export)`, () => {
      const cjs = execFileSync(process.execPath, ['-e', `process.stdout.write(typeof require(${JSON.stringify(name)}).${symbol})`], { cwd: root, encoding: 'utf8', timeout: 60_000 });
      const esm = execFileSync(process.execPath, ['--input-type=module', '-e', `import * as m from ${JSON.stringify(name)}; process.stdout.write(typeof m.${symbol})`], { cwd: root, encoding: 'utf8', timeout: 60_000 });
      assert.equal(cjs, 'function');
      assert.equal(esm, 'function');
      assert.ok(existsSync(join(root, 'packages', dir, `dist/esm/${file}.d.ts`)), `dist/esm/${file}.d.ts`);
      assert.ok(existsSync(join(root, 'packages', dir, `dist/cjs/${file}.d.ts`)), `dist/cjs/${file}.d.ts`);
    });
  }
});
