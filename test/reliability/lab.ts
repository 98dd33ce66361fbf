import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BrokerName } from '../support/brokers.js';
import { clusterNode, clusterVariable } from '../support/clusters.js';

export { clusterNode, clusterVariable };

const exec = promisify(execFile);

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The broker lab's folder (`scripts/brokers` writes `env` there). */
export const LAB_DIR = process.env.BABELQUEUE_BROKERS_DIR ?? join(ROOT, '.brokers');

const ENV: Record<BrokerName, string> = {
  redis: 'BABELQUEUE_REDIS_URL',
  'redis-cluster': 'BABELQUEUE_REDIS_CLUSTER_URL',
  rabbitmq: 'BABELQUEUE_RABBITMQ_URL',
  kafka: 'BABELQUEUE_KAFKA_URL',
  artemis: 'BABELQUEUE_ARTEMIS_URL',
  sqs: 'BABELQUEUE_SQS_URL',
  pulsar: 'BABELQUEUE_PULSAR_URL',
  asb: 'BABELQUEUE_ASB_URL',
  postgres: 'BABELQUEUE_POSTGRES_URL',
};

/** The lab broker's URL: the environment first, then `.brokers/env` (as `npm test` reads it). */
export function brokerUrl(name: BrokerName): string | undefined {
  const variable = ENV[name];
  if (process.env[variable]) return process.env[variable];
  const file = join(LAB_DIR, 'env');
  if (!existsSync(file)) return undefined;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m?.[1] === variable) return m[2];
  }
  return undefined;
}

/** The cluster lab's folder (`scripts/clusters` writes `env` there). */
export const CLUSTERS_DIR = process.env.BABELQUEUE_CLUSTERS_DIR ?? join(ROOT, '.clusters');

/** A cluster's URL: the environment first, then `.clusters/env`. */
export function clusterUrl(name: string): string | undefined {
  const variable = clusterVariable(name);
  if (process.env[variable]) return process.env[variable];
  const file = join(CLUSTERS_DIR, 'env');
  if (!existsSync(file)) return undefined;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m?.[1] === variable) return m[2];
  }
  return undefined;
}

/** The variable that names a lab broker's URL. */
export function brokerVariable(name: BrokerName): string {
  return ENV[name];
}

/** Runs a command, rejecting with its output when it fails. */
export async function run(cmd: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
  try {
    const { stdout, stderr } = await exec(cmd, [...args], { env: options.env ?? process.env, timeout: options.timeoutMs ?? 300_000, maxBuffer: 16 << 20 });
    return stdout + stderr;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.trim());
  }
}

/**
 * Restarts a lab broker on its data (`scripts/brokers restart`), waiting until
 * it answers its readiness probe again. Refused by the script for a broker
 * this checkout did not start.
 */
export async function restartBroker(name: BrokerName): Promise<void> {
  await run(join(ROOT, 'scripts/brokers'), ['restart', name], { timeoutMs: 600_000 });
}

/**
 * Whether this checkout's `scripts/brokers up` started the broker (its pid
 * file names a live process): only then may the suite restart it. A broker
 * another checkout started is shared, and restarting it breaks other runs.
 */
export function ownsBroker(name: BrokerName): boolean {
  const file = join(LAB_DIR, name, 'pid');
  if (!existsSync(file)) return false;
  return readFileSync(file, 'utf8').split('\n').some((line) => {
    const pid = Number(line.trim());
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Destroys every TCP connection to `port` on this host from the client side
 * (`ss -K`, the kernel's SOCK_DESTROY: the client sees ECONNABORTED, the
 * broker a reset). How the suite cuts connections to brokers that have no
 * command of their own for it.
 */
export async function killSockets(port: number): Promise<number> {
  const filter = ['state', 'established', 'dst', '127.0.0.1', 'dport', '=', `:${port}`];
  const listed = await run('ss', ['-Htn', ...filter]);
  const count = listed.split('\n').filter((line) => line.trim() !== '').length;
  await run('ss', ['-K', '-Htn', ...filter]);
  return count;
}

/**
 * Destroys only the connections to `ports` that processes `pids` hold (the
 * suite's own workers and controller): how a connection cut hits a shared
 * broker without breaking other checkouts' clients. Resolves with how many.
 */
export async function killOwnSockets(ports: readonly number[], pids: readonly number[]): Promise<number> {
  const own = new Set(pids);
  let killed = 0;
  for (const port of ports) {
    const filter = ['state', 'established', 'dst', '127.0.0.1', 'dport', '=', `:${port}`];
    const listed = await run('ss', ['-Htnp', ...filter]);
    for (const line of listed.split('\n')) {
      const m = /127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:\d+\s.*\bpid=(\d+)/.exec(line);
      if (m === null || !own.has(Number(m[2]))) continue;
      await run('ss', ['-K', '-Htn', ...filter, 'sport', '=', `:${m[1]}`]);
      killed += 1;
    }
  }
  return killed;
}
