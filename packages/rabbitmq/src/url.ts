import { ConfigurationError, maskUrl } from '@babelqueue/core';

// Connection URLs carry credentials (`amqp://user:password@host`). Nothing the
// binding logs or throws may print them: URLs go through `maskAmqpUrl` (the
// core's `maskUrl` per host), client error texts through the core's `redactCredentials`.

/** scheme, user-info (with its `@`), the comma-separated hosts, and the rest (vhost, query). */
const SHAPE = /^(amqps?:)\/\/((?:[^@/?#]*@)?)([^/?#]*)(.*)$/is;

/**
 * The single-host URLs of a RabbitMQ URL, in the order written. A cluster is
 * given as several hosts in one URL, comma-separated, sharing the credentials,
 * the vhost and the query: `amqp://user:pass@h1:5672,h2:5672,h3/vhost?heartbeat=10`
 * → `amqp://user:pass@h1:5672/vhost?heartbeat=10`, … A one-host URL gives itself.
 * Throws a clear {@link ConfigurationError} (credentials masked) for anything
 * but amqp:// or amqps://, and for an empty host in the list.
 */
export function amqpUrls(url: string): string[] {
  const shape = SHAPE.exec(url);
  if (shape === null) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
      throw new ConfigurationError(`a RabbitMQ URL starts with amqp:// or amqps://, got ${maskAmqpUrl(url)}`);
    }
    throw new ConfigurationError(`not a valid AMQP URL: ${maskAmqpUrl(url)}`);
  }
  const [, scheme, userInfo, hosts, rest] = shape as unknown as [string, string, string, string, string];
  const urls = hosts.split(',').map((host) => {
    if (host.trim() === '') throw new ConfigurationError(`an empty host in the host list of ${maskAmqpUrl(url)}`);
    return `${scheme}//${userInfo}${host.trim()}${rest}`;
  });
  for (const one of urls) {
    try {
      new URL(one);
    } catch {
      throw new ConfigurationError(`not a valid AMQP URL: ${maskAmqpUrl(url)}`);
    }
  }
  return urls;
}

/** Throws a clear {@link ConfigurationError} for anything but an amqp:// or amqps:// URL of one or more hosts (credentials masked). */
export function assertAmqpUrl(url: string): void {
  amqpUrls(url);
}

/**
 * The URL with its password (else its user name) masked as the core's
 * `maskUrl` does, for one host or a host list (`amqp://guest:***@h1,h2/`).
 */
export function maskAmqpUrl(url: string): string {
  const shape = SHAPE.exec(url);
  if (shape === null || !shape[3]?.includes(',')) return maskUrl(url);
  const [, scheme, userInfo, hosts, rest] = shape as unknown as [string, string, string, string, string];
  const user = userInfo.slice(0, -1);
  const masked = user === '' ? '' : user.includes(':') ? `${user.slice(0, user.indexOf(':'))}:***@` : '***@';
  return `${scheme.toLowerCase()}//${masked}${hosts}${rest === '' ? '/' : rest}`;
}
