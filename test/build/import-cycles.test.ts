/**
 * No import circle anywhere under packages/*\/src: a module never reaches
 * itself through its own imports (type-only imports included, since a reader
 * follows them too). Imports only point down, so a reader can start at any
 * file and never come back; a circle names its files.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The files of the same package `file` imports: static, re-exports and dynamic, relative specifiers only. */
export function importsOf(file: string, text: string): string[] {
  const found = new Set<string>();
  const specifiers = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|[\s;])import\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(specifiers)) {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    if (existsSync(target)) found.add(target);
    else if (existsSync(join(target.replace(/\.ts$/, ''), 'index.ts'))) found.add(join(target.replace(/\.ts$/, ''), 'index.ts'));
  }
  return [...found];
}

/** Every circle of the graph, each once, as the list of its files (a strongly connected component of more than one file, or a file importing itself). */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative enough for a few hundred files.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, order.get(next)!));
      }
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) out.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return out;
}

describe('no import circle under packages/*/src', () => {
  test('the finder sees a circle of two files and of one, and none in a chain', () => {
    assert.deepEqual(circles(new Map([['a', ['b']], ['b', ['a']], ['c', ['a']]])), [['a', 'b']]);
    assert.deepEqual(circles(new Map([['a', ['a']]])), [['a']]);
    assert.deepEqual(circles(new Map([['a', ['b']], ['b', ['c']], ['c', []]])), []);
    assert.deepEqual(importsOf('/x/src/a.ts', "import type { T } from './b.js';\nexport { u } from '../c.js';\nawait import('./d.js');"), []);
  });

  const packages = readdirSync(join(root, 'packages')).filter((name) => existsSync(join(root, 'packages', name, 'src')));
  for (const name of packages) {
    test(name, () => {
      const files = sources(join(root, 'packages', name, 'src'));
      const graph = new Map(files.map((file) => [file, importsOf(file, readFileSync(file, 'utf8'))]));
      const found = circles(graph).map((circle) => circle.map((file) => relative(root, file)).join(' <-> '));
      assert.deepEqual(found, [], `import circles in packages/${name}/src:\n${found.join('\n')}`);
    });
  }
});
