import { maskUrl } from '@babelqueue/core';
import { RedisConfigError } from './options.js';

/**
 * The Sentinel URL form (no BabelQueue SDK defines one; the Python SDK hands
 * its URL to redis-py's `from_url`, which has none):
 * `redis+sentinel://[user:pass@]host:port[,host:port…]/<master name>[/<db>][?options]`.
 * The hosts are Sentinels (port 26379 when left out), the path names the
 * master as the Sentinels know it; the credentials are the data nodes'
 * (`sentinelPassword=` in the query when the Sentinels have their own).
 */
export const SENTINEL_PROTOCOL = 'redis+sentinel:';

/** scheme, user-info (with its `@`), the comma-separated hosts, and the rest (path, query). */
const SHAPE = /^([a-z][a-z0-9+.-]*:)\/\/((?:[^@/?#]*@)?)([^/?#]*)(.*)$/is;

/** True for a `redis+sentinel://` URL. */
export function isSentinelUrl(url: string): boolean {
  return url.toLowerCase().startsWith(`${SENTINEL_PROTOCOL}//`);
}

/**
 * Splits the host list off a URL so that the rest parses with `new URL`:
 * `single` has the first host only, `hosts` is the list as written (undefined
 * for one host). {@link joinHosts} puts it back.
 */
export function splitHosts(url: string): { readonly single: string; readonly hosts: string | undefined } {
  const shape = SHAPE.exec(url);
  if (shape === null || !shape[3]?.includes(',')) return { single: url, hosts: undefined };
  const [, scheme, userInfo, hosts, rest] = shape as unknown as [string, string, string, string, string];
  return { single: `${scheme}//${userInfo}${hosts.split(',')[0]}${rest}`, hosts };
}

/** `url` (one host, as `new URL` writes it) with its host replaced by the list `hosts`. */
export function joinHosts(url: string, hosts: string | undefined): string {
  if (hosts === undefined) return url;
  const shape = SHAPE.exec(url);
  if (shape === null) return url;
  const [, scheme, userInfo, , rest] = shape as unknown as [string, string, string, string, string];
  return `${scheme}//${userInfo}${hosts}${rest}`;
}

/** The URL with its password (else user name) masked, for one host or a Sentinel list. */
export function maskRedisUrl(url: string): string {
  const { single, hosts } = splitHosts(url);
  return joinHosts(maskUrl(single), hosts);
}

/** What a `redis+sentinel://` URL names. */
export interface SentinelTarget {
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** The master's name as the Sentinels know it. */
  readonly name: string;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly sentinelPassword: string | undefined;
}

/** Parses a `redis+sentinel://` URL; errors never repeat the input (it may hold a password). */
export function parseSentinelUrl(url: string): SentinelTarget {
  const { single, hosts } = splitHosts(url);
  let parsed: URL;
  try {
    parsed = new URL(single);
  } catch {
    throw new RedisConfigError('not a Sentinel URL (expected redis+sentinel://[user:pass@]host:port,host:port/<master name>[/db])');
  }
  const sentinels = (hosts ?? parsed.host).split(',').map((entry) => {
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.trim());
    if (m === null) throw new RedisConfigError(`a Sentinel address must be host[:port], got "${entry.trim()}"`);
    return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: m[2] === undefined ? 26379 : Number(m[2]) };
  });
  const [name, db, ...extra] = parsed.pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
  if (name === undefined) throw new RedisConfigError('a Sentinel URL names the master in its path: redis+sentinel://host:port,host:port/<master name>');
  if (extra.length > 0 || (db !== undefined && !/^\d+$/.test(db))) {
    throw new RedisConfigError('a Sentinel URL\'s path is /<master name>[/<db number>]');
  }
  return {
    sentinels,
    name,
    db: db === undefined ? 0 : Number(db),
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    sentinelPassword: parsed.searchParams.get('sentinelPassword') ?? undefined,
  };
}
