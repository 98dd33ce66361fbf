#!/usr/bin/env node
// Builds the package in the current directory: ESM + declarations with tsc,
// then a CommonJS copy, so both `import` and `require` work with types.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const cwd = process.cwd();
const run = (args) => execFileSync(process.execPath, [tsc, ...args], { stdio: 'inherit', cwd });

rmSync(join(cwd, 'dist'), { recursive: true, force: true });
if (existsSync(join(cwd, 'scripts', 'generate.mjs'))) {
  execFileSync(process.execPath, [join(cwd, 'scripts', 'generate.mjs')], { stdio: 'inherit', cwd });
}
run(['-p', 'tsconfig.build.json']);
run([
  '-p', 'tsconfig.build.json',
  '--module', 'CommonJS', '--moduleResolution', 'Node10', '--customConditions', 'null',
  '--outDir', 'dist/cjs', '--declarationDir', 'dist/cjs',
]);
mkdirSync(join(cwd, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(cwd, 'dist', 'cjs', 'package.json'), '{"type":"commonjs"}\n');
