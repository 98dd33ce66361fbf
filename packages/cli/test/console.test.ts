import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { transportFromUrl } from '@babelqueue/core';
import { main, type CliIo } from 'babelqueue';
import { memoryUrl, run } from './support/capture.js';

describe('babelqueue console', () => {
  test('--help says how to start it and what every option does', async () => {
    const r = await run(['console', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /^Usage: babelqueue console --url URL \[--queue Q \.\.\.\]/);
    for (const option of ['--queue Q', '--dlq NAME', '--host H', '--port P', '--read-only', '--token T', '--basic-auth U:P', '--scan-limit N', '--scan-budget-ms MS', '--audit-log FILE']) {
      assert.ok(r.out.includes(option), option);
    }
    assert.match(r.out, /babelqueue console --url redis:\/\/127\.0\.0\.1:6379 --queue orders/);
    assert.match(r.out, /port \(default 8794;/, 'clear of 8080 (the lab\'s Pulsar admin)');
    assert.match((await run(['--help'])).out, /console {2,}the DLQ console/);
  });

  for (const [argv, message] of [
    [['console', '--url', 'redis://127.0.0.1:1', '--host', '0.0.0.0'], /--host 0\.0\.0\.0 is reachable beyond this machine: add --token/],
    [['console', '--url', 'redis://127.0.0.1:1', '--token', 'short'], /--token must be at least 16 characters/],
    [['console', '--url', 'redis://127.0.0.1:1', '--basic-auth', 'nocolon'], /--basic-auth takes user:password/],
    [['console', '--url', 'redis://127.0.0.1:1', '--port', '70000'], /--port must be 0-65535/],
    [['console', '--url', 'redis://127.0.0.1:1', 'extra'], /unexpected argument "extra"/],
  ] as const) {
    test(`${argv.slice(3).join(' ')} → exit 2 before connecting`, async () => {
      const r = await run([...argv]);
      assert.equal(r.code, 2);
      assert.match(r.err, message);
    });
  }

  test('serves the page until stopped, read-only when asked, and prints where', async () => {
    const url = memoryUrl();
    const transport = await transportFromUrl(url);
    await transport.publishRaw!('orders.dlq', Buffer.from('{"raw":"x","dead_letter":{"reason":"poison","error":"e","exception":null,"failed_at":1,"original_queue":"orders","attempts":1,"lang":"go"}}'));
    const stop = new AbortController();
    let out = '';
    let err = '';
    const io: CliIo = {
      stdout: (text) => (out += text),
      stderr: (text) => (err += text),
      env: {},
      interactive: false,
      confirm: async () => false,
      signal: stop.signal,
      sharesMemoryBrokers: true,
    };
    const exited = main(['console', '--url', url, '--queue', 'orders', '--port', '0', '--read-only', '--scan-budget-ms', '700', '--json'], io);
    try {
      const deadline = Date.now() + 60_000;
      while (!out.includes('\n')) {
        assert.ok(Date.now() < deadline, `the console printed its address (stderr: ${err})`);
        await new Promise((r) => setTimeout(r, 25));
      }
      const printed = JSON.parse(out) as { url: string; open: string; read_only: boolean };
      assert.match(printed.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      assert.equal(printed.read_only, true);
      const opened = await fetch(new URL('/api/session', printed.url));
      const session = await opened.json() as { read_only: boolean; dlqs: string[]; csrf: string; limits: { budget_ms: number } };
      assert.deepEqual([session.read_only, session.dlqs, session.limits.budget_ms], [true, ['orders.dlq'], 700]);
      // Reads need the session's cookie and CSRF token, as the page sends them.
      const cookie = (opened.headers.getSetCookie()[0] ?? '').split(';')[0]!;
      const records = await (await fetch(new URL('/api/records?dlq=orders.dlq', printed.url), { headers: { Cookie: cookie, 'X-BQ-CSRF': session.csrf } })).json() as { records: { kind: string }[] };
      assert.deepEqual(records.records.map((r) => r.kind), ['poison']);
    } finally {
      stop.abort();
    }
    assert.equal(await exited, 0, err);
    assert.match(err, /Ctrl-C stops it/);
  });

  test('--audit-log FILE: every action is appended to FILE as a JSON line', async () => {
    const url = memoryUrl();
    const transport = await transportFromUrl(url);
    await transport.publishRaw!('orders.dlq', Buffer.from('{"raw":"x","dead_letter":{"reason":"poison","error":"e","exception":null,"failed_at":1,"original_queue":"orders","attempts":1,"lang":"go"}}'));
    const file = join(mkdtempSync(join(tmpdir(), 'bq-cli-audit-')), 'audit.jsonl');
    const stop = new AbortController();
    let out = '';
    const io: CliIo = { stdout: (text) => (out += text), stderr: () => undefined, env: {}, interactive: false, confirm: async () => false, signal: stop.signal, sharesMemoryBrokers: true };
    const exited = main(['console', '--url', url, '--queue', 'orders', '--port', '0', '--audit-log', file, '--json'], io);
    try {
      const deadline = Date.now() + 60_000;
      while (!out.includes('\n')) {
        assert.ok(Date.now() < deadline, 'the console printed its address');
        await new Promise((r) => setTimeout(r, 25));
      }
      const { url: base } = JSON.parse(out) as { url: string };
      const opened = await fetch(new URL('/api/session', base));
      const { csrf } = await opened.json() as { csrf: string };
      const headers = { Cookie: (opened.headers.getSetCookie()[0] ?? '').split(';')[0]!, 'X-BQ-CSRF': csrf };
      const [row] = (await (await fetch(new URL('/api/records?dlq=orders.dlq', base), { headers })).json() as { records: { index: number; hash: string }[] }).records;
      const deleted = await fetch(new URL('/api/delete', base), { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ dlq: 'orders.dlq', records: [{ index: row!.index, hash: row!.hash }] }) });
      assert.equal(deleted.status, 200);
      const [entry] = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { action: string; counts: { deleted: number } });
      assert.deepEqual([entry!.action, entry!.counts.deleted], ['delete', 1]);
    } finally {
      stop.abort();
    }
    assert.equal(await exited, 0);
  });
});
