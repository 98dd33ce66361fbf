import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '@babelqueue/core';
import { RedisConfigError, type RedisClient } from './options.js';
import { reviveWhenEnded } from './revive.js';
import { ClosingSentinelConnector } from './sentinel-connector.js';
import { isSentinelUrl, parseSentinelUrl, type SentinelTarget } from './sentinel.js';

/** The URL used when neither `url` nor `redis` is given. */
export const DEFAULT_URL = 'redis://127.0.0.1:6379';

/** How long a cluster client waits for a CLUSTER SLOTS answer before it tries another node. */
const CLUSTER_SLOTS_TIMEOUT_MS = 10_000;

/**
 * Opens a connection from a `redis://` or `rediss://` URL. No auto-pipelining:
 * it delays every command by a turn of the event loop, and the consume path
 * batches on its own (acks ride on the next reserve call).
 */
export function connect(url: string, cluster: boolean, logger: Logger): RedisClient {
  if (isSentinelUrl(url)) {
    if (cluster) throw new RedisConfigError('a Sentinel URL names a primary and its replicas, not a Redis Cluster: drop cluster');
    return logErrors(sentinelClient(parseSentinelUrl(url), logger), logger);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisConfigError('not a Redis URL (expected redis://host:port, rediss://host:port or redis+sentinel://host:port,host:port/<master name>)');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RedisConfigError(`a Redis URL starts with redis:// or rediss:// (redis+sentinel:// for Sentinel), got "${parsed.protocol}//"`);
  }
  if (!cluster) return logErrors(new Redis(url), logger);
  const tls = parsed.protocol === 'rediss:' ? {} : undefined;
  return logErrors(new Cluster([{ host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 6379) }], {
    // ioredis gives CLUSTER SLOTS 1 s by default: a healthy cluster on a busy host can take
    // longer, and the client then reports no startup node available and never connects.
    slotsRefreshTimeout: CLUSTER_SLOTS_TIMEOUT_MS,
    redisOptions: {
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(tls ? { tls } : {}),
    },
  }), logger);
}

/**
 * A client that asks the Sentinels where the primary is, on the first connect
 * and on every reconnect: after a failover it follows the promoted replica.
 * `failoverDetector` also drops the connection as soon as a Sentinel
 * announces +switch-master, instead of waiting for the old primary's socket
 * to fail; a node that answers but is no longer the primary is left for the next.
 * When ioredis ends it by itself, it is connected again ({@link reviveWhenEnded});
 * when it is closed while connecting, the detector goes too ({@link ClosingSentinelConnector}).
 */
function sentinelClient(target: SentinelTarget, logger: Logger): Redis {
  const client = new Redis({
    sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: target.name,
    db: target.db,
    role: 'master',
    failoverDetector: true,
    Connector: ClosingSentinelConnector,
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
  });
  reviveWhenEnded(client, logger);
  return client;
}

/**
 * A second connection with the same settings (blocking reads must not hold up
 * the main one), `overrides` on top; a Sentinel client's is revived as it is.
 */
export function duplicate(client: RedisClient, logger: Logger, overrides: Partial<RedisOptions> = {}): RedisClient {
  if (client instanceof Cluster) return logErrors(client.duplicate(), logger);
  const copy = client.duplicate(overrides);
  if (client.options.sentinels) reviveWhenEnded(copy, logger);
  return logErrors(copy, logger);
}

/**
 * Gives a client the transport opened an `error` listener. Without one,
 * ioredis prints "Unhandled error event" with a stack trace on every failed
 * reconnect. The commands themselves still fail or time out on their own; this
 * only logs: a warning for the first error (and for each different one) until
 * the connection is ready again, the repeats at debug level. The client's
 * credentials are cut out of the text.
 */
export function logErrors<T extends RedisClient>(client: T, logger: Logger): T {
  const secrets = credentialsOf(client);
  let last: string | undefined;
  client.on('ready', () => {
    last = undefined;
  });
  client.on('error', (error: unknown) => {
    let text = error instanceof Error ? error.message || error.name : String(error);
    for (const secret of secrets) text = text.split(secret).join('***');
    const repeat = text === last;
    last = text;
    (repeat ? logger.debug : logger.warn)({ error: text }, 'redis connection error; ioredis reconnects');
  });
  return client;
}

function credentialsOf(client: RedisClient): string[] {
  const options = client instanceof Cluster ? client.options.redisOptions : client.options;
  return [options?.password, options?.username].filter((s): s is string => typeof s === 'string' && s.length > 0);
}
