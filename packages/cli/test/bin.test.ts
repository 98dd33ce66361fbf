import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = join(repoRoot, 'packages/cli/src/bin.ts');

interface Spawned {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `babelqueue` entry point from source, as `npx babelqueue` would run the build. */
function babelqueue(args: string[], env: Record<string, string> = {}): Promise<Spawned> {
  return new Promise((done) => {
    // As a user runs it: the CLI's own log default, whatever this test run's level is.
    // No broker from this test run's environment either, unless a test gives one.
    const { BABELQUEUE_LOG_LEVEL: _level, BABELQUEUE_URL: _url, ...inherited } = process.env;
    const childEnv: NodeJS.ProcessEnv = { ...inherited, ...env };
    execFile(process.execPath, ['--conditions=source', '--import', 'tsx', bin, ...args], { cwd: repoRoot, env: childEnv, timeout: 240_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      done({ code, stdout, stderr });
    });
  });
}

describe('the babelqueue executable', () => {
  test('demo: short human-readable run ending with the dead-letter record, exit 0, nothing on stderr', async () => {
    const r = await babelqueue(['demo']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.trimEnd().split('\n');
    assert.ok(lines.length <= 25, `demo output is short (${lines.length} lines)`);
    assert.match(r.stdout, /^BabelQueue demo on memory:\/\/: queue "orders", max attempts 3, dead-lettering on\n/);
    assert.equal(lines.filter((l) => l.startsWith('  ✓')).length, 3);
    assert.match(r.stdout, /✗ +urn:babel:payments:charge +order 1042 +attempt 3 +Payment gateway timeout → orders\.dlq\n/);
    for (const row of [/^ {2}reason +failed$/m, /^ {2}error +Payment gateway timeout$/m, /^ {2}exception +GatewayTimeout$/m, /^ {2}attempts +3$/m, /^ {2}trace_id +[0-9a-f-]{36}$/m, /^ {2}meta\.id +[0-9a-f-]{36}$/m]) {
      assert.match(r.stdout, row);
    }
  });

  test('demo --json: one JSON document with the record, its trace_id the one the payment was published with', async () => {
    const r = await babelqueue(['demo', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.deliveries.length, 6);
    const [record] = report.dead_letters;
    assert.equal(record.dead_letter.attempts, 3);
    assert.equal(record.meta.id, report.published[2].id);
    assert.match(record.trace_id, /^[0-9a-f-]{36}$/);
  });

  test('a usage error is exit 2 with a short usage text', async () => {
    const r = await babelqueue(['consume', '--max', 'many']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^babelqueue: --max must be an integer >= 1, got "many"\nUsage: babelqueue consume/);
    assert.ok(r.stderr.split('\n').length < 6, "r.stderr.split('\\n').length < 6");
  });

  test('dlq, consume and publish refuse memory:// (exit 2, naming --url and BABELQUEUE_URL) instead of reporting an empty broker', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['dlq', 'list'], {}, /^babelqueue: dlq needs a broker: pass --url \(e\.g\. --url redis:\/\/127\.0\.0\.1:6379\) or set BABELQUEUE_URL\n/],
      [['dlq', 'show', 'some-id'], {}, /^babelqueue: dlq needs a broker: pass --url/],
      [['dlq', 'redrive', '--url', 'memory://'], {}, /^babelqueue: memory:\/\/ lives inside one process: this command would only ever see a new, empty broker\. Pass --url/],
      [['dlq', 'purge', '--yes'], { BABELQUEUE_URL: 'memory://' }, /^babelqueue: BABELQUEUE_URL is memory:\/\/, but memory:\/\/ lives inside one process/],
      // Without the refusal this one would wait for messages forever.
      [['consume'], {}, /^babelqueue: consume needs a broker: pass --url/],
      [['publish', '--url', 'memory://orders', 'urn:babel:orders:created', '{}'], {}, /^babelqueue: memory:\/\/ lives inside one process: the message would be gone when this command exits\. Pass --url/],
    ];
    // Independent processes: run them side by side.
    const results = await Promise.all(cases.map(([args, env]) => babelqueue(args, env)));
    results.forEach((r, i) => {
      const [args, , message] = cases[i]!;
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, /\nUsage: babelqueue /, args.join(' '));
    });
  });

  test('a scheme no binding serves is exit 1 naming the known ones, never an npm package or the password', async () => {
    const r = await babelqueue(['dlq', 'list', '--url', 'gopher://user:pw-secret@host']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^babelqueue: no transport is known for "gopher:\/\/" .*; known: memory, .*sqs/);
    assert.ok(!r.stderr.includes('npm install') && !r.stderr.includes('pw-secret'), "!r.stderr.includes('npm install') && !r.stderr.includes('pw-secret')");
  });

  const redis = existsSync(join(repoRoot, 'packages/redis/src/index.ts'));
  test('an unreachable broker is exit 1, one line naming its host with the credentials masked, no stack trace', { skip: !redis && '@babelqueue/redis is not there yet' }, async () => {
    const r = await babelqueue(['publish', '--url', 'redis://user:secret@127.0.0.1:1', '--timeout-ms', '1500', 'urn:babel:t:x', '{}']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.ok(!r.stderr.includes('secret'), r.stderr);
    assert.doesNotMatch(r.stderr, /Unhandled error event|\n\s+at /, 'no ioredis stack traces');
    // Connected first: the one line names the masked target, the deadline and the last error.
    assert.equal(r.stderr, 'babelqueue: cannot connect to redis://***@127.0.0.1:1 (legacy layout): no answer within 1500 ms (last error: connect ECONNREFUSED 127.0.0.1:1)\n');
  });
});
