import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lab, uniqueQueue } from './support/pulsar.js';

const pkg = join(import.meta.dirname, '..');

describe('README', { skip: lab.skip }, () => {
  it('the example runs and prints what it says', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const code = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    // Its own namespace, so the example's fixed queue name meets no other run.
    const namespace = uniqueQueue('readme');
    const admin = `${lab.url}/admin/v2/namespaces/public/${namespace}`;
    assert.equal((await fetch(admin, { method: 'PUT' })).status, 204);
    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    try {
      const file = join(dir, 'example.ts');
      writeFileSync(file, code);
      const web = new URL(lab.url!);
      const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
        encoding: 'utf8',
        env: { ...process.env, PULSAR_URL: `pulsar://${web.hostname}:6650?http=${web.port}&namespace=${namespace}`, BABELQUEUE_LOG_LEVEL: 'silent' },
      });
      assert.deepEqual(out.trim().split('\n'), ['order 1042 attempt 1', 'order 1043 attempt 1']);
      // Acknowledgements reach the stats asynchronously: poll, bounded.
      let backlog = -1;
      for (const until = Date.now() + 60_000; backlog !== 0 && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
        const stats = (await fetch(`${lab.url}/admin/v2/persistent/public/${namespace}/readme-orders/stats`).then((r) => r.json())) as any;
        backlog = stats.subscriptions.babelqueue.msgBacklog;
      }
      assert.equal(backlog, 0, 'everything acknowledged');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      for (const topic of ['readme-orders', 'readme-orders.dlq']) {
        await fetch(`${lab.url}/admin/v2/persistent/public/${namespace}/${topic}?force=true`, { method: 'DELETE' });
      }
      await fetch(`${admin}?force=true`, { method: 'DELETE' });
    }
  });
});
