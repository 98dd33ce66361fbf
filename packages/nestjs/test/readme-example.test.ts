/**
 * The README's example, run as a program on the lab's Redis: it publishes,
 * its handler prints, and SIGTERM (enableShutdownHooks) stops it through the
 * worker's drain. Its @nestjs/bullmq version must compile against the same service.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { until, within } from '../../../test/support/until.js';

const pkg = join(import.meta.dirname, '..');
const redis = broker('redis');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

function section(readme: string, heading: string): string {
  return new RegExp(`## ${heading}\\n\\n(?:[^\\n]+\\n)*\\n?\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(readme)![1]!;
}

describe('README: the same service with @nestjs/bullmq', () => {
  it('compiles (tsc, as a Nest application is built) with the service, catalog and imports of the example', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const example = section(readme, 'Example');
    const shared = example.slice(0, example.indexOf('@Injectable()\nexport class OrdersProcessor'));
    assert.match(shared, /export class OrdersService/);
    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    try {
      writeFileSync(join(dir, 'bullmq.mts'), `${shared}${section(readme, 'The same service with `@nestjs/bullmq`')}`);
      const out = await new Promise<string>((resolve) => {
        execFile(process.execPath, [
          tsc, '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
          '--experimentalDecorators', '--emitDecoratorMetadata', '--types', 'node', 'bullmq.mts',
        ], { cwd: dir, timeout: 120_000 }, (error, stdout, stderr) => resolve(error === null ? '' : `${stdout}${stderr}${error.message}`));
      });
      assert.equal(out, '');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('README', { skip: redis.skip }, () => {
  const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the example handles the order it published, then stops on SIGTERM after the worker drained', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const example = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const file = join(dir, 'example.ts');
    writeFileSync(file, example);
    const child = spawn(process.execPath, [
      '--conditions=source', '--import', 'tsx', '--import', join(pkg, 'test', 'support', 'register-hook.mjs'), file,
    ], {
      cwd: dir,
      env: { ...process.env, BABELQUEUE_URL: redis.url, ORDERS_QUEUE: uniqueQueue('nest-readme'), ORDERS_CONCURRENCY: '2', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    try {
      await until(() => output.includes('order 1042 attempt 1') || child.exitCode !== null, 60_000, 'the example to handle its order');
      assert.match(output, /order 1042 attempt 1\n/, output);
      child.kill('SIGTERM');
      const { code, signal } = await within(exited, 30_000, 'the example to exit on SIGTERM');
      // Nest closes the application, then ends the process with the signal it received.
      assert.ok(code === 0 || signal === 'SIGTERM', `exit ${code} ${signal}\n${output}`);
      assert.match(output, /worker stopped/, output);
      assert.doesNotMatch(output, /ERROR/, output);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
