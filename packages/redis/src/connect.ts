import { Cluster, Redis } from 'ioredis';
import { RedisConfigError, type RedisClient } from './options.js';

/** The URL used when neither `url` nor `redis` is given. */
export const DEFAULT_URL = 'redis://127.0.0.1:6379';

/**
 * Opens a connection from a `redis://` or `rediss://` URL. No auto-pipelining:
 * it delays every command by a turn of the event loop, and the consume path
 * batches on its own (acks ride on the next reserve call).
 */
export function connect(url: string, cluster: boolean): RedisClient {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisConfigError('not a Redis URL (expected redis://host:port or rediss://host:port)');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RedisConfigError(`a Redis URL starts with redis:// or rediss://, got "${parsed.protocol}//"`);
  }
  if (!cluster) return new Redis(url);
  const tls = parsed.protocol === 'rediss:' ? {} : undefined;
  return new Cluster([{ host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 6379) }], {
    redisOptions: {
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(tls ? { tls } : {}),
    },
  });
}

/** A second connection with the same settings (blocking reads must not hold up the main one). */
export function duplicate(client: RedisClient): RedisClient {
  return client instanceof Cluster ? client.duplicate() : client.duplicate();
}
