import type { Logger } from '@babelqueue/core';
import { type RedisTransportOptions } from './options.js';
import { RedisTransport } from './transport.js';
import { joinHosts, splitHosts } from './sentinel.js';
import { number, parseUrl } from './url.js';

/** Query parameters the transport reads (and removes before connecting). */
const PARAMS = ['layout', 'retryAfter', 'migrationBatchSize', 'blockTimeoutS', 'prefix', 'cluster', 'waitForReplicas', 'waitForReplicasMs'] as const;

/**
 * A transport from a URL: `redis://[user:pass@]host:port[/db]` or `rediss://…`,
 * with the options as query parameters, e.g.
 * `redis://127.0.0.1:6379?layout=zset&retryAfter=60&prefix=laravel_database_`.
 * `retryAfter=null` disables recovery; `cluster=1` treats the host as a seed
 * node of a Redis Cluster. `redis+sentinel://host:port,host:port/<master name>[/db]`
 * asks those Sentinels for the primary (see {@link RedisTransportOptions.waitForReplicas}).
 * Explicit `overrides` win over the URL.
 */
export function redisTransportFromUrl(url: string | URL, overrides: Partial<RedisTransportOptions> & { logger?: Logger } = {}): RedisTransport {
  // A Sentinel URL lists several hosts, which `new URL` cannot parse: the list is set aside and put back.
  const { single, hosts } = splitHosts(typeof url === 'string' ? url : url.href);
  const parsed = parseUrl(single);
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
  const wait = q.get('waitForReplicas');
  if (wait !== null) options.waitForReplicas = number('waitForReplicas', wait);
  const waitMs = q.get('waitForReplicasMs');
  if (waitMs !== null) options.waitForReplicasMs = number('waitForReplicasMs', waitMs);
  for (const name of PARAMS) q.delete(name);
  return new RedisTransport({ ...options, ...overrides, url: joinHosts(parsed.href, hosts) });
}

/**
 * The `transportFromUrl` every binding exports for the core's URL registry,
 * which hands over the URL as written (a string).
 */
export function transportFromUrl(url: string | URL): RedisTransport {
  return redisTransportFromUrl(url);
}
