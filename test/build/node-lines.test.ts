// The Node.js lines the project says it supports are the lines it tests: every
// package's `engines.node` names exactly the lines `scripts/node` pins (the ones
// .ci/run runs), and the README's table lists the same lines and versions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** `[20]=20.20.2` lines of the PINNED table in scripts/node. */
function pinned(): Map<number, string> {
  const table = /declare -A PINNED=\(([^)]*)\)/.exec(read('scripts/node'));
  assert.ok(table, 'scripts/node has its PINNED table');
  return new Map([...table[1]!.matchAll(/\[(\d+)\]=(\d+\.\d+\.\d+)/g)].map((m) => [Number(m[1]), m[2]!]));
}

function workspaces(): string[] {
  return ['.', ...(JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces];
}

describe('supported Node.js lines', () => {
  const lines = pinned();

  it('scripts/node pins one version of each line, on that line', () => {
    assert.ok(lines.size >= 4, `lines pinned: ${[...lines.keys()].join(', ')}`);
    for (const [line, version] of lines) assert.equal(Number(version.split('.')[0]), line);
  });

  it('every package\'s engines.node names exactly the pinned lines', () => {
    const expected = [...lines.keys()].sort((a, b) => a - b);
    for (const ws of workspaces()) {
      const pkg = JSON.parse(read(join(ws, 'package.json'))) as { name: string; engines?: { node?: string } };
      const range = pkg.engines?.node;
      assert.ok(range, `${pkg.name} declares engines.node`);
      const majors = range.split('||').map((part) => Number(/\^(\d+)\./.exec(part.trim())?.[1]));
      assert.deepEqual(majors, expected, `${pkg.name}: engines.node "${range}" names the tested lines`);
    }
  });

  it('the README\'s table lists each line with its pinned version', () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## Supported Node.js versions'));
    assert.ok(section.length > 0 && readme.includes('## Supported Node.js versions'), 'README has the section');
    for (const [line, version] of lines) {
      assert.match(section, new RegExp(`\\| ${line} \\|[^\\n]*${version.replaceAll('.', '\\.')}`), `README row for Node ${line} (${version})`);
    }
  });
});
