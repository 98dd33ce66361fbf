import { RedisConfigError } from './options.js';

/** Parses the URL; the error never repeats the input, which may hold a password. */
export function parseUrl(url: string | URL): URL {
  try {
    return new URL(typeof url === 'string' ? url : url.href);
  } catch {
    throw new RedisConfigError('not a Redis URL (expected redis://[user:pass@]host:port[/db], rediss://… or redis+sentinel://host:port,host:port/<master name>[/db])');
  }
}

/** A numeric query parameter, or a {@link RedisConfigError} naming it. */
export function number(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || Number.isNaN(n)) throw new RedisConfigError(`${name} must be a number, got "${value}"`);
  return n;
}
