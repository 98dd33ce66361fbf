import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LUA } from '../src/lua/scripts.generated.js';

const pkg = join(import.meta.dirname, '..');
const luaDir = join(pkg, 'src', 'lua');

describe('embedded Lua scripts', () => {
  it('scripts.generated.ts holds every src/lua/*.lua file verbatim', () => {
    const files = readdirSync(luaDir).filter((f) => f.endsWith('.lua')).sort();
    const byName = LUA as Record<string, string>;
    assert.equal(Object.keys(byName).length, files.length);
    for (const file of files) {
      const name = file.replace(/\.lua$/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      assert.equal(byName[name], readFileSync(join(luaDir, file), 'utf8'), `${file} is out of date in scripts.generated.ts`);
    }
  });

  it('the generator agrees (run `npm run generate -w packages/redis` after editing a .lua file)', () => {
    execFileSync(process.execPath, [join(pkg, 'scripts', 'generate.mjs'), '--check'], { stdio: 'pipe', timeout: 60_000 });
  });
});
