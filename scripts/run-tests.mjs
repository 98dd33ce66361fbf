#!/usr/bin/env node
// `npm test`: every *.test.ts under packages/*/test and test/, run from source
// with node's test runner; @babelqueue/core's own tests first, under c8 (its coverage gate).
// Broker URLs written by `scripts/brokers up` (and cluster URLs written by
// `scripts/clusters up`) are picked up automatically;
// without .brokers/env, brokers answering on the lab's ports are adopted. The
// run ends with one line naming the broker suites it skipped.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { adoptLabBrokers, skippedLine } from './lab-brokers.mjs';

const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);

function testFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'fixtures') return [];
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The URLs `scripts/brokers up` wrote to .brokers/env, or `scripts/clusters up` to .clusters/env. */
function loadEnvFile(dir) {
  const file = join(root, dir, 'env');
  if (!existsSync(file)) return {};
  const env = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m && process.env[m[1]] === undefined) env[m[1]] = m[2];
  }
  return env;
}

const filter = process.argv.slice(2);
const packagesDir = join(root, 'packages');
let files = [
  ...readdirSync(packagesDir).flatMap((p) => testFiles(join(packagesDir, p, 'test'))),
  ...testFiles(join(root, 'test')),
].sort();
if (filter.length > 0) files = files.filter((f) => filter.some((x) => relative(root, f).includes(x)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const c8 = require.resolve('c8/bin/c8.js');
const coverage = process.env.BABELQUEUE_COVERAGE !== '0' && filter.length === 0;
const nodeArgs = (testFiles) => [
  '--conditions=source', '--import', 'tsx',
  '--test', `--test-concurrency=${process.env.BABELQUEUE_TEST_CONCURRENCY ?? 4}`,
  // One output on every Node line: 20 defaults to TAP when stdout is not a terminal, 22+ to spec.
  '--test-reporter=spec',
  // Per file and per test: only a hung file ever reaches it; the packaging test (pack, then a
  // fresh npm install) needs a few minutes on two busy cores.
  `--test-timeout=${process.env.BABELQUEUE_TEST_TIMEOUT ?? 300000}`,
  ...testFiles.map((f) => relative(root, f)),
];
// The coverage gate is on @babelqueue/core, measured by its own tests (they reach 96 % of its
// lines alone). The other suites run without coverage: collecting it in every process they
// start costs a quarter more CPU, for a figure the gate does not read.
const coreTests = join(packagesDir, 'core', 'test');
const runs = coverage
  ? [
      { label: "@babelqueue/core's tests, under the coverage gate", files: files.filter((f) => f.startsWith(coreTests)), gate: true },
      { label: 'every other suite', files: files.filter((f) => !f.startsWith(coreTests)), gate: false },
    ]
  : [{ label: undefined, files, gate: false }];
const argsOf = ({ files: testFiles, gate }) => gate
  ? [c8, '--check-coverage', '--lines', '85', '--functions', '80', '--branches', '75',
     '--include', 'packages/core/src/**', '--exclude', '**/*.generated.*',
     '--reporter', 'text-summary', '--reporter', 'lcov', process.execPath, ...nodeArgs(testFiles)]
  : nodeArgs(testFiles);

const { vars: adoptedVars, adopted } = await adoptLabBrokers(root);
if (adopted.length > 0) {
  console.log(`no .brokers/env: adopted the brokers answering on the lab's default ports: ${adopted.join(', ')}`);
}
// test/support/brokers.ts appends the name of each broker suite it skips here.
const scratch = mkdtempSync(join(tmpdir(), 'babelqueue-tests-'));
const skippedFile = join(scratch, 'skipped');
const failed = [];
for (const run of runs.filter((r) => r.files.length > 0)) {
  if (run.label !== undefined) console.log(`\n=== npm test: ${run.label} (${run.files.length} files)\n`);
  const result = spawnSync(process.execPath, argsOf(run), {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...loadEnvFile('.brokers'), ...loadEnvFile('.clusters'), ...adoptedVars, BABELQUEUE_SKIPPED_FILE: skippedFile },
  });
  if (result.status !== 0) failed.push(run.label ?? 'the tests');
}
const line = skippedLine(existsSync(skippedFile) ? readFileSync(skippedFile, 'utf8').split('\n').filter(Boolean) : []);
rmSync(scratch, { recursive: true, force: true });
if (line !== undefined) console.log(`\n${line}`);
if (failed.length > 0 && runs.length > 1) console.log(`\nfailed: ${failed.join('; ')}`);
process.exit(failed.length === 0 ? 0 : 1);
