/**
 * Installing from this repository: `npm run pack` makes one tarball per
 * publishable workspace; a fresh project installs them together and uses
 * them as a user would — the root README's first example as ESM and as CJS,
 * every package with `require`, `import` and types, `npx babelqueue demo`, and a
 * NestJS application built by tsc on `@babelqueue/nestjs`.
 * The @babelqueue/* packages must come from the tarballs only (the public
 * registry has none of ours); third-party dependencies come from the npm cache
 * or the registry, as in any install.
 *
 * It packs the dist/ that `npm ci` (prepare) built, with --no-build: rebuilding
 * dist/ in place would pull files from under test files running beside this
 * one. Under CI a missing build fails, as in test/build/dual-package.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PACKAGES, SUBPATH_ENTRIES } from '../support/packages.js';

const root = join(import.meta.dirname, '../..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const built = PACKAGES.every(([, dir]) => existsSync(join(root, 'packages', dir, 'dist/cjs/index.js')));
if (!built && process.env.CI === 'true') throw new Error('packages are not built: npm ci (prepare) or npm run build');
const skip = built ? false : 'SKIPPED (not built): run npm run build';
if (skip) process.stderr.write(`\n*** ${skip} ***\n\n`);

// Packing, then installing the tarballs' third-party dependencies (from the
// npm cache when it has them), takes a minute or more on two busy CI cores;
// the bound only turns a hung npm into a failure.
const INSTALL_TIMEOUT_MS = 300_000;
const RUN_TIMEOUT_MS = 60_000;

/** The parts of an installed package.json the checks read. */
interface Manifest {
  version: string;
  exports?: unknown;
  scripts?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a user's shell: no npm_* settings inherited from the
 * `npm test` running this file (they name this repository as the project), and
 * no PATH entry inside the repository (its node_modules/.bin has a babelqueue).
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
  env.PATH = (process.env.PATH ?? '').split(delimiter).filter((p) => !p.startsWith(root)).join(delimiter);
  delete env.BABELQUEUE_URL;
  delete env.BABELQUEUE_LOG_LEVEL;
  delete env.NODE_OPTIONS;
  return env;
}

function run(file: string, args: string[], cwd: string, timeout = RUN_TIMEOUT_MS): Promise<Ran> {
  return new Promise((done) => {
    execFile(file, args, { cwd, env: userEnv(), timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

async function ok(file: string, args: string[], cwd: string, timeout?: number): Promise<string> {
  const r = await run(file, args, cwd, timeout);
  assert.equal(r.code, 0, `${file} ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The root README's first code block: the in-memory App example. */
function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  return /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
}

/** The same example as a CommonJS program: `require` for its imports, its top-level awaits inside an async function. */
function asCommonJs(esm: string): string {
  const body = esm.replace(/^import \{([^}]*)\} from ('[^']+');$/gm, 'const {$1} = require($2);');
  assert.doesNotMatch(body, /^import /m, 'the README example uses an import form this test cannot turn into require');
  return `(async () => {\n${body}\n})().catch((error) => { console.error(error); process.exit(1); });\n`;
}

describe('npm run pack: tarballs a fresh project installs and uses', { skip }, () => {
  let work = '';
  let app = '';
  let tarballs: string[] = [];
  /** Each installed package and the tarball it came from, as the app's package.json records them. */
  let packed: { name: string; spec: string }[] = [];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'babelqueue-packaging-'));
    const packs = join(work, 'packs');
    await ok('npm', ['run', 'pack', '--', '--no-build', '--out', packs], root, INSTALL_TIMEOUT_MS);
    tarballs = readdirSync(packs).filter((f) => f.endsWith('.tgz'));

    app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{ "name": "fresh-app", "private": true }\n');
    // Should npm ever look for an @babelqueue/* package on a registry, it gets a
    // refused connection, and the install fails, instead of someone else's package.
    // npm does ask it for @babelqueue/core before it takes the tarball; short retry
    // pauses keep those refused asks from costing npm's default 10-60 s each.
    writeFileSync(join(app, '.npmrc'), '@babelqueue:registry=http://127.0.0.1:9/\nfetch-retry-mintimeout=200\nfetch-retry-maxtimeout=2000\n');
    await ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs.map((f) => `../packs/${f}`)], app, INSTALL_TIMEOUT_MS);
    const { dependencies = {} } = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    packed = Object.entries(dependencies).map(([name, spec]) => ({ name, spec }));
  }, { timeout: INSTALL_TIMEOUT_MS * 2 });

  const manifestOf = (name: string) => JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as Manifest;

  after(() => {
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  test('one tarball per publishable workspace, every known package among them', () => {
    assert.equal(packed.length, tarballs.length, 'each tarball is a package of its own');
    for (const p of packed) assert.match(p.spec, /^file:\.\.\/packs\/[^/]+\.tgz$/, p.name);
    for (const [name] of PACKAGES) assert.ok(packed.some((p) => p.name === name), `${name} was packed`);
  });

  test('every @babelqueue/* package and the CLI were installed from the tarballs, none from a registry', () => {
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string; version?: string }> };
    const ours = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/(@babelqueue\/[^/]+|babelqueue)$/.test(path));
    assert.deepEqual(ours.map(([path]) => path.replace(/^.*node_modules\//, '')).sort(), packed.map((p) => p.name).sort(), 'each installed once, at the top');
    for (const [path, entry] of ours) assert.match(entry.resolved ?? '', /^file:\.\.\/packs\/[^/]+\.tgz$/, path);
  });

  test('the installed manifests are fit for another project: no "source" condition, siblings pinned exactly, no scripts', () => {
    const versions = new Map(packed.map((p) => [p.name, manifestOf(p.name).version]));
    for (const { name } of packed) {
      const manifest = manifestOf(name);
      assert.doesNotMatch(JSON.stringify(manifest.exports), /"source"/, `${name}: src/ is not shipped`);
      assert.equal(manifest.scripts, undefined, name);
      for (const deps of [manifest.dependencies, manifest.peerDependencies]) {
        for (const [dep, spec] of Object.entries(deps ?? {})) {
          if (versions.has(dep)) assert.equal(spec, versions.get(dep), `${name} → ${dep}`);
        }
      }
    }
  });

  test("the root README's first example runs as ESM (import) and as CJS (require)", async () => {
    const example = readmeExample();
    writeFileSync(join(app, 'readme.mjs'), example);
    writeFileSync(join(app, 'readme.cjs'), asCommonJs(example));
    // A project resolving with a "source" condition of its own must still get dist/.
    for (const args of [['readme.mjs'], ['readme.cjs'], ['--conditions=source', 'readme.mjs']]) {
      assert.match(await ok(process.execPath, args, app), /^1042 [0-9a-f-]{36} 1\n$/, args.join(' '));
    }
  });

  test("the root README's first example runs as pasted in a project `npm init -y` made, after the README's one-line instruction", async () => {
    const project = join(app, 'default-project'); // node_modules resolve from the app above
    mkdirSync(project);
    await ok('npm', ['init', '-y'], project);
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { type?: string };
    assert.notEqual(manifest.type, 'module', 'npm init -y makes a CommonJS project');
    writeFileSync(join(project, 'index.js'), readmeExample());
    const asMade = await run(process.execPath, ['index.js'], project);
    assert.notEqual(asMade.code, 0, 'pasted as is, the example does not run in a CommonJS project: the README must say what to set');
    const instruction = /in a project `npm init -y` made[^\n]*?run `(npm pkg set type=module)`/.exec(readFileSync(join(root, 'README.md'), 'utf8'));
    assert.ok(instruction, 'the README says in one line what to set');
    await ok('npm', instruction[1]!.split(' ').slice(1), project);
    assert.match(await ok(process.execPath, ['index.js'], project), /^1042 [0-9a-f-]{36} 1\n$/);
  });

  test('every package loads with require and with import, with the same exports', async () => {
    const names = JSON.stringify([...packed.map((p) => p.name), ...SUBPATH_ENTRIES.map(([name]) => name)]);
    const keys = 'Object.keys(m).filter((k) => k !== "default" && k !== "module.exports").sort()';
    writeFileSync(join(app, 'exports.cjs'), `const out = {};\nfor (const n of ${names}) { const m = require(n); out[n] = ${keys}; }\nconsole.log(JSON.stringify(out));\n`);
    writeFileSync(join(app, 'exports.mjs'), `const out = {};\nfor (const n of ${names}) { const m = await import(n); out[n] = ${keys}; }\nconsole.log(JSON.stringify(out));\n`);
    const cjs = JSON.parse(await ok(process.execPath, ['exports.cjs'], app)) as Record<string, string[]>;
    const esm = JSON.parse(await ok(process.execPath, ['exports.mjs'], app)) as Record<string, string[]>;
    assert.deepEqual(cjs, esm);
    for (const [name, , symbol] of PACKAGES) assert.ok(cjs[name]?.includes(symbol), `${name} exports ${symbol}`);
    for (const [name, , , symbol] of SUBPATH_ENTRIES) assert.ok(cjs[name]?.includes(symbol), `${name} exports ${symbol}`);
  });

  test('types resolve for import (.mts) and require (.cts), and are real types, not any', async () => {
    // `// @ts-expect-error` fails the check when the export is untyped (any).
    const entries = [...PACKAGES, ...SUBPATH_ENTRIES.map(([name, dir, , symbol]) => [name, dir, symbol] as const)];
    const probe = entries.map(([name, , symbol], i) => `import { ${symbol} as s${i} } from '${name}';\n// @ts-expect-error typed\nexport const n${i}: number = s${i};\n`).join('');
    writeFileSync(join(app, 'types.mts'), probe);
    writeFileSync(join(app, 'types.cts'), probe);
    await ok(process.execPath, [
      tsc, '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
      '--typeRoots', join(root, 'node_modules/@types'), '--types', 'node', 'types.mts', 'types.cts',
    ], app);
  });

  test('@babelqueue/nestjs: a NestJS application compiled by tsc (decorator metadata) injects a service by type into an @OnJob handler, as ESM and as CJS', async () => {
    // The same source as an ES module and as CommonJS (which require()s NestJS 12, published as ES modules only).
    const source = [
      "import { Injectable, Module } from '@nestjs/common';",
      "import { NestFactory } from '@nestjs/core';",
      "import type { Message } from '@babelqueue/core';",
      "import { BabelQueueClient, BabelQueueModule, OnJob } from '@babelqueue/nestjs';",
      'let handled: () => void = () => undefined;',
      'const done = new Promise<void>((resolve) => { handled = resolve; });',
      '@Injectable() export class Orders { describe(id: number): string { return `order ${id}`; } }',
      '@Injectable() export class Processor {',
      '  constructor(private readonly orders: Orders) {}',
      "  @OnJob('urn:babel:orders:created') created(data: { order_id: number }, message: Message<{ order_id: number }>): void {",
      '    console.log(this.orders.describe(data.order_id), message.attempts);',
      '    handled();',
      '  }',
      '}',
      "@Module({ imports: [BabelQueueModule.forRoot({ url: 'memory://packaging', queue: 'orders' })], providers: [Orders, Processor] })",
      'export class AppModule {}',
      'async function main(): Promise<void> {',
      '  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });',
      "  await app.get(BabelQueueClient).publish('urn:babel:orders:created', { order_id: 1042 });",
      '  await done;',
      '  await app.close();',
      '}',
      'main().catch((error) => { console.error(error); process.exit(1); });',
      '',
    ].join('\n');
    const dir = join(app, 'nest');
    mkdirSync(dir);
    writeFileSync(join(dir, 'main.mts'), source);
    writeFileSync(join(dir, 'main.cts'), source);
    await ok(process.execPath, [
      tsc, '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
      '--experimentalDecorators', '--emitDecoratorMetadata', '--outDir', 'out',
      '--typeRoots', join(root, 'node_modules/@types'), '--types', 'node', 'main.mts', 'main.cts',
    ], dir);
    for (const file of ['out/main.mjs', 'out/main.cjs']) {
      assert.equal(await ok(process.execPath, [file], dir), 'order 1042 1\n', file);
    }
  });

  test('npx babelqueue demo runs the installed CLI; dlq list without a broker is a usage error, not "empty"', async () => {
    const out = await ok('npx', ['--no', 'babelqueue', 'demo'], app);
    assert.match(out, /^BabelQueue demo on memory:\/\/: queue "orders", max attempts 3, dead-lettering on\n/);
    assert.match(out, /orders\.dlq now holds the failed payment/);
    const list = await run('npx', ['--no', 'babelqueue', 'dlq', 'list'], app);
    assert.equal(list.code, 2, list.stderr);
    assert.match(list.stderr, /^babelqueue: dlq needs a broker: pass --url .* or set BABELQUEUE_URL\n/);
  });
});
