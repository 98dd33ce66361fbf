import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { broker } from './support/redis.js';

const b = broker('redis');
const pkg = join(import.meta.dirname, '..');

describe('README', { skip: b.skip }, () => {
  it('the example runs and prints what it says', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const code = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    // Its own database, so the example's fixed queue name meets no other test.
    const url = new URL(b.url!);
    url.pathname = '/15';
    const redis = new Redis(url.href);
    await redis.flushdb();
    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    try {
      const file = join(dir, 'example.ts');
      writeFileSync(file, code);
      const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
        encoding: 'utf8',
        env: { ...process.env, REDIS_URL: url.href, BABELQUEUE_LOG_LEVEL: 'silent' },
        timeout: 120_000,
      });
      assert.deepEqual(out.trim().split('\n'), ['order 1042 attempt 1', 'order 1043 attempt 1']);
      assert.deepEqual(await redis.keys('*'), [], 'nothing left behind');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await redis.flushdb();
      await redis.quit();
    }
  });
});
