#!/usr/bin/env node
// Builds the package in the current directory: ESM + declarations with tsc,
// and a CommonJS copy, so both `import` and `require` work with types.
// Emit only (--noCheck, the same files): `npm run typecheck` checks the types,
// and skipping the check halves the build `npm ci` runs. The two emits run at once.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const cwd = process.cwd();
const run = (args) => new Promise((resolve, reject) => {
  const child = execFile(process.execPath, [tsc, '--noCheck', ...args], { cwd }, (error) => (error ? reject(error) : resolve()));
  child.stdout.pipe(process.stdout);
  child.stderr.pipe(process.stderr);
});

rmSync(join(cwd, 'dist'), { recursive: true, force: true });
if (existsSync(join(cwd, 'scripts', 'generate.mjs'))) {
  execFileSync(process.execPath, [join(cwd, 'scripts', 'generate.mjs')], { stdio: 'inherit', cwd });
}
await Promise.all([
  run(['-p', 'tsconfig.build.json']),
  run([
    '-p', 'tsconfig.build.json',
    '--module', 'CommonJS', '--moduleResolution', 'Node10', '--customConditions', 'null',
    '--outDir', 'dist/cjs', '--declarationDir', 'dist/cjs',
  ]),
]);
mkdirSync(join(cwd, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(cwd, 'dist', 'cjs', 'package.json'), '{"type":"commonjs"}\n');
