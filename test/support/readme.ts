/**
 * Runs the first ```ts block after a heading of a package README, as a user
 * would run it (from source, in a temporary folder inside the package), and
 * returns what it printed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../../', import.meta.url)));

export function readmeExample(pkg: string, heading: string): string {
  const readme = readFileSync(join(root, 'packages', pkg, 'README.md'), 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`packages/${pkg}/README.md has no heading "${heading}"`);
  const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))?.[1];
  if (code === undefined) throw new Error(`no ts block under "${heading}"`);
  return code;
}

export function runReadmeExample(pkg: string, heading: string, env: Record<string, string> = {}): Promise<string> {
  const dir = mkdtempSync(join(root, 'packages', pkg, 'test', '.readme-'));
  const file = join(dir, 'example.ts');
  writeFileSync(file, readmeExample(pkg, heading));
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, BABELQUEUE_LOG_LEVEL: 'silent', ...env },
    }, (error, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      if (error) reject(new Error(`README example of ${pkg} failed: ${error.message}\n${stderr}`));
      else resolvePromise(stdout);
    });
  });
}
