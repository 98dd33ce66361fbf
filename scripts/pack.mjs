#!/usr/bin/env node
// `npm run pack`: an installable tarball of every publishable workspace, all in
// packs/ (git-ignored), for using the packages before they are on the npm
// registry: `npm install ./packs/*.tgz` in another project.
//
//   node scripts/pack.mjs [--no-build] [--out DIR]
//
// The workspaces are the root package.json's (workspaces.mjs), so a package
// added there is packed too; private ones are skipped. Each is built first
// (with --no-build its dist/ must already be there), then the files `npm pack`
// selects for it are staged with the manifest of published-manifest.mjs and
// packed from there. Every file the manifest points at must be in the tarball.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { missingTargets, publishedManifest } from './published-manifest.mjs';
import { workspaces } from './workspaces.mjs';

const root = join(import.meta.dirname, '..');
const { values: options } = parseArgs({
  options: { 'no-build': { type: 'boolean' }, out: { type: 'string' } },
  strict: true,
});
const out = resolve(options.out ?? join(root, 'packs'));

// The npm running this script (`npm run pack`), else the one on PATH.
const npmCli = process.env.npm_execpath;
function npm(args, { cwd = root, json = false } = {}) {
  const [file, argv] = npmCli?.endsWith('.js') ? [process.execPath, [npmCli, ...args]] : ['npm', args];
  const stdout = execFileSync(file, argv, { cwd, encoding: 'utf8', stdio: ['ignore', json ? 'pipe' : 'inherit', 'inherit'] });
  return json ? JSON.parse(stdout) : undefined;
}

const all = workspaces(root);
const packed = all.filter((w) => w.manifest.private !== true);
const privateNames = new Set(all.filter((w) => w.manifest.private === true).map((w) => w.manifest.name));
const siblings = new Map(packed.map((w) => [w.manifest.name, w.manifest.version]));
const selectors = packed.flatMap((w) => ['-w', w.location]);

if (options['no-build']) warnIfStale(packed);
else npm(['run', 'build', '--if-present', ...selectors]);

// What npm would put in each tarball (its `files`, README, LICENSE, package.json).
const listed = new Map(npm(['pack', '--dry-run', '--json', '--ignore-scripts', ...selectors], { json: true }).map((p) => [p.name, p.files.map((f) => f.path)]));

const staging = mkdtempSync(join(tmpdir(), 'babelqueue-pack-'));
try {
  const problems = [];
  const stagedDirs = packed.map((workspace, i) => {
    const dir = join(staging, `${i}-${workspace.location.replaceAll('/', '-')}`);
    const files = listed.get(workspace.manifest.name).filter((f) => f !== 'package.json');
    for (const file of files) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      copyFileSync(join(workspace.path, file), join(dir, file));
    }
    // The MIT notice travels with every package.
    if (!files.some((f) => /^licen[cs]e/i.test(f)) && existsSync(join(root, 'LICENSE'))) copyFileSync(join(root, 'LICENSE'), join(dir, 'LICENSE'));
    const manifest = publishedManifest(workspace.manifest, siblings, privateNames);
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const missing of missingTargets(manifest, files)) {
      problems.push(`${workspace.location}: package.json points at ${missing}, which would not be in the tarball ` +
        (missing.startsWith('dist/') ? '(not built? run npm run build, or npm run pack without --no-build)' : '(add it to "files")'));
    }
    return dir;
  });
  if (problems.length > 0) {
    console.error(`cannot pack:\n  ${problems.join('\n  ')}`);
    process.exitCode = 1;
  } else {
    packInto(out, stagedDirs);
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}

/** Packs the staged packages into `dir`, replacing the tarballs there, and lists them. */
function packInto(dir, stagedDirs) {
  mkdirSync(dir, { recursive: true });
  for (const old of readdirSync(dir).filter((f) => f.endsWith('.tgz'))) rmSync(join(dir, old));
  const tarballs = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir, ...stagedDirs], { cwd: staging, json: true });
  const near = relative(process.cwd(), dir);
  const where = near.startsWith('..') ? dir : near || '.';
  for (const t of tarballs) {
    console.log(`${join(where, t.filename)}  ${t.name}@${t.version}  ${t.entryCount} files, ${Math.round(t.size / 1024)} kB`);
  }
  console.log(`\nInstall them together in a project: npm install ${join(dir, '*.tgz')}`);
}

/** With --no-build, says which packages' dist/ is older than their src/ (the tarball would hold the old build). */
function warnIfStale(list) {
  const newest = (dir) => readdirSync(dir, { recursive: true })
    .reduce((max, file) => Math.max(max, statSync(join(dir, file)).mtimeMs), 0);
  for (const w of list) {
    const built = join(w.path, 'dist');
    if (!existsSync(built) || !existsSync(join(w.path, 'src'))) continue;
    if (newest(join(w.path, 'src')) > statSync(built).mtimeMs) {
      console.warn(`warning: ${w.location}: src/ changed after dist/ was built; packing the old build (drop --no-build to rebuild)`);
    }
  }
}
