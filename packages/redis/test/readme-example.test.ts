import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { broker, uniqueQueue } from './support/redis.js';

const b = broker('redis');
const pkg = join(import.meta.dirname, '..');

describe('README', { skip: b.skip }, () => {
  it('the example runs and prints what it says', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const example = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    // A queue of its own: several runs (other worktrees) share this Redis at once.
    const queue = uniqueQueue('readme');
    const code = example.replace("queue: 'orders'", `queue: '${queue}'`);
    assert.notEqual(code, example, "the example names its queue as queue: 'orders'");
    const redis = new Redis(b.url!);
    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    try {
      const file = join(dir, 'example.ts');
      writeFileSync(file, code);
      const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
        encoding: 'utf8',
        env: { ...process.env, REDIS_URL: b.url!, BABELQUEUE_LOG_LEVEL: 'silent' },
        timeout: 120_000,
      });
      assert.deepEqual(out.trim().split('\n'), ['order 1042 attempt 1', 'order 1043 attempt 1']);
      assert.deepEqual(await redis.keys(`*${queue}*`), [], 'nothing left behind');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      const left = await redis.keys(`*${queue}*`);
      if (left.length > 0) await redis.del(...left);
      await redis.quit();
    }
  });
});
