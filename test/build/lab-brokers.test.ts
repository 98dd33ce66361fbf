// `npm test` in a checkout without .brokers/env (a fresh clone) adopts the lab
// brokers answering on their default ports, and every run ends with one line
// naming the broker suites it skipped and the command that starts them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
// @ts-expect-error -- a plain .mjs script without types
import { adoptLabBrokers, labBrokers } from '../../scripts/lab-brokers.mjs';
import { broker } from '../support/brokers.js';

const root = join(import.meta.dirname, '..', '..');
const redis = broker('redis');

interface LabBroker { name: string; variable: string; url: string; probe: string; port: number }

/** A checkout with the lab scripts and no .brokers/env. */
function freshClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bq-fresh-clone-'));
  symlinkSync(join(root, 'scripts'), join(dir, 'scripts'));
  return dir;
}

function withoutTestContext(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  return env;
}

describe('lab brokers for npm test', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('every broker of scripts/brokers.d is known with its variable, URL and probe', () => {
    const brokers = labBrokers(root) as LabBroker[];
    assert.deepEqual(brokers.map((b) => b.name).sort(), ['artemis', 'asb', 'kafka', 'postgres', 'pulsar', 'rabbitmq', 'redis', 'redis-cluster', 'sqs']);
    const redisRow = brokers.find((b) => b.name === 'redis')!;
    assert.deepEqual(redisRow, { name: 'redis', variable: 'BABELQUEUE_REDIS_URL', url: 'redis://127.0.0.1:6379', probe: 'redis', port: 6379 });
  });

  test('without .brokers/env, a broker answering on its lab port is adopted; a set variable is left alone', { skip: redis.skip || (redis.url !== 'redis://127.0.0.1:6379' && 'the lab Redis is not on its default port') }, async () => {
    const clone = freshClone();
    dirs.push(clone);
    const { vars, adopted } = await adoptLabBrokers(clone, {}) as { vars: Record<string, string>; adopted: string[] };
    assert.ok(adopted.includes('redis'), `adopted: ${adopted.join(', ')}`);
    assert.equal(vars.BABELQUEUE_REDIS_URL, 'redis://127.0.0.1:6379');
    const chosen = await adoptLabBrokers(clone, { BABELQUEUE_REDIS_URL: 'redis://elsewhere:6379' }) as { vars: Record<string, string>; adopted: string[] };
    assert.ok(!chosen.adopted.includes('redis'), 'a set variable is not adopted over');
    assert.equal(chosen.vars.BABELQUEUE_REDIS_URL, undefined);
  });

  test('with .brokers/env, nothing is adopted (the file is the source)', async () => {
    const clone = freshClone();
    dirs.push(clone);
    mkdirSync(join(clone, '.brokers'));
    writeFileSync(join(clone, '.brokers', 'env'), '');
    assert.deepEqual(await adoptLabBrokers(clone, {}), { vars: {}, adopted: [] });
  });

  test('a run that skipped a broker suite ends with one line naming it and the command that starts it', async () => {
    const out = await new Promise<string>((resolve) => {
      // An empty variable is a choice: the artemis suite skips, and nothing is adopted for it.
      execFile(process.execPath, [join(root, 'scripts', 'run-tests.mjs'), 'packages/rabbitmq/test/wrong-protocol'], {
        cwd: root,
        // NODE_TEST_CONTEXT would make the nested runner report to this one instead of printing.
        env: { ...withoutTestContext(), BABELQUEUE_ARTEMIS_URL: '', CI: '' },
        timeout: 240_000,
      }, (_error, stdout) => resolve(stdout));
    });
    assert.match(out.trimEnd().split('\n').at(-1)!, /^skipped broker suites \(no broker\): artemis; start them with: scripts\/brokers up artemis$/);
  });
});
