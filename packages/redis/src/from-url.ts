import type { Logger } from '@babelqueue/core';
import { RedisConfigError, type RedisTransportOptions } from './options.js';
import { RedisTransport } from './transport.js';

/** Query parameters the transport reads (and removes before connecting). */
const PARAMS = ['layout', 'retryAfter', 'migrationBatchSize', 'blockTimeoutS', 'prefix', 'cluster'] as const;

/**
 * A transport from a URL: `redis://[user:pass@]host:port[/db]` or `rediss://…`,
 * with the options as query parameters, e.g.
 * `redis://127.0.0.1:6379?layout=zset&retryAfter=60&prefix=laravel_database_`.
 * `retryAfter=null` disables recovery; `cluster=1` treats the host as a seed
 * node of a Redis Cluster. Explicit `overrides` win over the URL.
 */
export function redisTransportFromUrl(url: string | URL, overrides: Partial<RedisTransportOptions> & { logger?: Logger } = {}): RedisTransport {
  const parsed = parseUrl(url);
  const q = parsed.searchParams;
  const options: { -readonly [K in keyof RedisTransportOptions]: RedisTransportOptions[K] } = {};
  const layout = q.get('layout');
  if (layout !== null) options.layout = layout as RedisTransportOptions['layout'];
  const retryAfter = q.get('retryAfter');
  if (retryAfter !== null) options.retryAfter = retryAfter === 'null' ? null : number('retryAfter', retryAfter);
  const batch = q.get('migrationBatchSize');
  if (batch !== null) options.migrationBatchSize = number('migrationBatchSize', batch);
  const block = q.get('blockTimeoutS');
  if (block !== null) options.blockTimeoutS = number('blockTimeoutS', block);
  const prefix = q.get('prefix');
  if (prefix !== null) options.prefix = prefix;
  const cluster = q.get('cluster');
  if (cluster !== null) options.cluster = cluster === '1' || cluster === 'true';
  for (const name of PARAMS) q.delete(name);
  return new RedisTransport({ ...options, ...overrides, url: parsed.href });
}

/**
 * The `transportFromUrl` every binding exports for the core's URL registry,
 * which hands over the URL as written (a string).
 */
export function transportFromUrl(url: string | URL): RedisTransport {
  return redisTransportFromUrl(url);
}

/** Parses the URL; the error never repeats the input, which may hold a password. */
function parseUrl(url: string | URL): URL {
  try {
    return new URL(typeof url === 'string' ? url : url.href);
  } catch {
    throw new RedisConfigError('not a Redis URL (expected redis://[user:pass@]host:port[/db] or rediss://…)');
  }
}

function number(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || Number.isNaN(n)) throw new RedisConfigError(`${name} must be a number, got "${value}"`);
  return n;
}
