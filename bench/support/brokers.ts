/**
 * Where the benches find the lab's brokers: the URLs from `.brokers/env`, and
 * whether a broker is up (a TCP connect to its URL's host and port).
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

/** The variables of `<root>/.brokers/env` (written by `scripts/brokers up`) that the environment does not set. */
export function brokerEnv(root: string): Record<string, string> {
  const file = join(root, '.brokers', 'env');
  const env: Record<string, string> = {};
  if (!existsSync(file)) return env;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m && process.env[m[1]!] === undefined) env[m[1]!] = m[2]!;
  }
  return env;
}

/** host:port of a broker URL (amqp://u:p@h:p, kafka://h:p,…, http://h:p, Endpoint=sb://h:p;…). */
function address(url: string): { host: string; port: number } | undefined {
  const m = /^(?:Endpoint=)?[a-z]+:\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^:/,;?]+)(?::(\d+))?/i.exec(url);
  if (m === null) return undefined;
  const scheme = url.replace(/^Endpoint=/i, '').split(':')[0]!.toLowerCase();
  const defaults: Record<string, number> = { redis: 6379, amqp: 5672, amqps: 5671, kafka: 9092, http: 80, https: 443, sb: 5671 };
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] !== undefined ? Number(m[2]) : (defaults[scheme] ?? 80) };
}

/** True when the broker's host:port takes a TCP connection within 2 s. */
export function reachable(url: string): Promise<boolean> {
  const where = address(url);
  if (where === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(where);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
