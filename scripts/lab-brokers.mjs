// The lab's brokers as scripts/brokers.d declares them (variable, URL, probe),
// for `npm test` in a checkout that has no .brokers/env: brokers already
// answering on the lab's default ports (started by another checkout, or by
// hand) are adopted instead of every broker suite being skipped.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

const HOST = '127.0.0.1';

/** Every broker with a `<name>_env`, `<name>_url` and `<name>_ready` in scripts/brokers.d. */
export function labBrokers(root) {
  const dir = join(root, 'scripts', 'brokers.d');
  const brokers = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sh')).sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const [, ident, variable] of text.matchAll(/^(\w+)_env=(\S+)$/gm)) {
      const url = new RegExp(`^${ident}_url\\(\\) \\{ echo "([^"]+)"; \\}`, 'm').exec(text)?.[1];
      // `probe KIND PORT;` or `probe KIND PORT && more checks;` (the protocol probe is what adoption runs).
      const ready = new RegExp(`^${ident}_ready\\(\\) \\{ probe (\\S+) (\\d+)(?:;| &&)`, 'm').exec(text);
      if (url === undefined || ready === null) continue;
      brokers.push({ name: ident.replaceAll('_', '-'), variable, url: url.replaceAll('$HOST', HOST), probe: ready[1], port: Number(ready[2]) });
    }
  }
  return brokers;
}

/** True when something accepts a TCP connection on the port (cheap: skips the protocol probe of a port nobody listens on). */
function listening(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port, timeout: 1000 });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true)).once('error', () => done(false)).once('timeout', () => done(false));
  });
}

/**
 * The brokers whose lab protocol probe passes (the right broker, not just an
 * open port): one python3 process runs scripts/brokers.d/probe.py's probes
 * side by side. Without python3, none.
 */
function answering(root, brokers) {
  if (brokers.length === 0) return Promise.resolve([]);
  const script = [
    'import sys, concurrent.futures as cf',
    'sys.path.insert(0, sys.argv[1])',
    'import probe',
    'pairs = [(k, int(p)) for k, p in (a.split(":") for a in sys.argv[2:])]',
    'def ok(pair):',
    '    try:',
    '        probe.PROBES[pair[0]]("127.0.0.1", pair[1]); return True',
    '    except Exception:',
    '        return False',
    'with cf.ThreadPoolExecutor(len(pairs)) as pool:',
    '    print(" ".join("1" if r else "0" for r in pool.map(ok, pairs)))',
  ].join('\n');
  const args = ['-c', script, join(root, 'scripts', 'brokers.d'), ...brokers.map((b) => `${b.probe}:${b.port}`)];
  return new Promise((resolve) => {
    execFile('python3', args, { timeout: 30_000 }, (error, stdout) => {
      const flags = error === null ? stdout.trim().split(' ') : [];
      resolve(brokers.filter((_, i) => flags[i] === '1'));
    });
  });
}

/**
 * Only without .brokers/env: the variables of unset brokers that answer on
 * their lab port, and the names adopted. A variable already set (even empty)
 * is the caller's choice and left alone.
 */
export async function adoptLabBrokers(root, env = process.env) {
  if (existsSync(join(root, '.brokers', 'env'))) return { vars: {}, adopted: [] };
  const unset = labBrokers(root).filter((b) => env[b.variable] === undefined);
  const open = await Promise.all(unset.map((b) => listening(b.port)));
  const found = await answering(root, unset.filter((_, i) => open[i]));
  return { vars: Object.fromEntries(found.map((b) => [b.variable, b.url])), adopted: found.map((b) => b.name) };
}

/**
 * The closing line of a run whose broker or cluster suites were skipped (names
 * from test/support/brokers.ts; a cluster's as `cluster:<name>`, from
 * test/support/clusters.ts), or undefined.
 */
export function skippedLine(names) {
  const unique = [...new Set(names)].sort();
  const brokers = unique.filter((n) => !n.startsWith('cluster:'));
  const clusters = unique.filter((n) => n.startsWith('cluster:')).map((n) => n.slice('cluster:'.length));
  const parts = [];
  if (brokers.length > 0) parts.push(`skipped broker suites (no broker): ${brokers.join(', ')}; start them with: scripts/brokers up ${brokers.join(' ')}`);
  if (clusters.length > 0) parts.push(`skipped cluster suites (no cluster): ${clusters.join(', ')}; start them with: scripts/clusters up ${clusters.join(' ')}`);
  return parts.length === 0 ? undefined : parts.join('\n');
}
