// Every relative link (and #anchor) in every README resolves; a package's
// README links nothing outside its package, since it is read inside
// node_modules and on the registry, where `../../README.md` is not there.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const readmes = execFileSync('git', ['ls-files', '*README.md'], { cwd: root, encoding: 'utf8' })
  .split('\n').filter((f) => f !== '' && !f.includes('node_modules'));

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** `[text](target)` targets, without a title. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const headings = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm);
  for (const [, heading] of headings) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(id!);
  return out;
}

describe('README links', () => {
  for (const readme of readmes) {
    test(readme, () => {
      const file = join(root, readme);
      const text = readFileSync(file, 'utf8');
      const packageDir = /^packages\/[^/]+\//.test(readme) ? dirname(file) : undefined;
      const broken: string[] = [];
      for (const link of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:, …
        const [path, anchor] = link.split('#', 2) as [string, string | undefined];
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (packageDir !== undefined && !`${target}${sep}`.startsWith(`${packageDir}${sep}`)) {
          broken.push(`${link}: outside the package (${relative(root, target)}), which is not there once installed`);
          continue;
        }
        if (anchor !== undefined && anchor !== '' && statSync(target).isFile() && target.endsWith('.md')) {
          if (!anchors(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${link}: no heading with anchor #${anchor}`);
        }
      }
      assert.deepEqual(broken, [], `${readme} has broken links`);
    });
  }
});
