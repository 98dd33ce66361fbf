import { ConfigurationError } from '@babelqueue/core';
import { maskUserInfo } from '@babelqueue/core/binding';

/** Pulsar's subscription types. */
export type SubscriptionType = 'Shared' | 'Key_Shared' | 'Exclusive' | 'Failover';

/** Pulsar's default web service ports: the admin API and the WebSocket API live there. */
export const DEFAULT_HTTP_PORT = 8080;
export const DEFAULT_HTTPS_PORT = 8443;
const DEFAULT_BINARY_PORT = 6650;
const DEFAULT_BINARY_TLS_PORT = 6651;

/** What a Pulsar URL says, every part optional except the web service. */
export interface ParsedPulsarUrl {
  /** The broker's web service (`http://…` or `https://…`), where the WebSocket and admin APIs live. */
  readonly webServiceUrl: URL;
  /** The binary-protocol service (`pulsar://host:port`), when the URL was one: where consumers connect. */
  readonly serviceUrl?: string;
  readonly token?: string;
  readonly tenant?: string;
  readonly namespace?: string;
  readonly subscription?: string;
  readonly subscriptionType?: SubscriptionType;
}

const QUERY_KEYS = ['http', 'token', 'tenant', 'namespace', 'subscription', 'subscriptionType'] as const;

/**
 * Parses the URL forms the binding accepts:
 *
 * - `pulsar://host:6650`, as the Python SDK spells it (the binary-protocol
 *   service, where consumers connect). The web service is derived: same host,
 *   port 8080. Another port (`pulsar://host:16650`) is refused unless `http`
 *   names the web service, which cannot be derived from it.
 * - `pulsar+ssl://host:6651`: TLS; the web service is `https://host:8443`.
 * - `http://host:8080` or `https://host:8443`: the web service itself.
 *
 * Query parameters: `http` (the web service port, or a full `http(s)://` URL
 * when it lives elsewhere), `token` (a JWT sent as `Authorization: Bearer`),
 * `tenant`, `namespace`, `subscription`, `subscriptionType`. Anything else is
 * refused with a clear error rather than ignored.
 */
export function parsePulsarUrl(raw: string): ParsedPulsarUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(`not a valid Pulsar URL: ${redactUrl(raw)}`);
  }
  const scheme = url.protocol;
  if (!['pulsar:', 'pulsar+ssl:', 'http:', 'https:'].includes(scheme)) {
    throw new ConfigurationError(`a Pulsar URL starts with pulsar://, pulsar+ssl://, http:// or https://, got ${redactUrl(raw)}`);
  }
  if (url.hostname === '') throw new ConfigurationError(`the Pulsar URL names no host: ${redactUrl(raw)}`);
  for (const key of url.searchParams.keys()) {
    if (!(QUERY_KEYS as readonly string[]).includes(key)) {
      throw new ConfigurationError(`unknown Pulsar URL parameter "${key}" (known: ${QUERY_KEYS.join(', ')})`);
    }
  }
  const tls = scheme === 'pulsar+ssl:' || scheme === 'https:';
  const binary = scheme === 'pulsar:' || scheme === 'pulsar+ssl:';
  const web = binary ? derivedWebService(url, tls, url.searchParams.get('http')) : bareWebService(url);
  const param = (key: (typeof QUERY_KEYS)[number]): string | undefined => {
    const value = url.searchParams.get(key);
    return value === null || value.trim() === '' ? undefined : value;
  };
  const subscriptionType = param('subscriptionType');
  return {
    webServiceUrl: web,
    ...(binary ? { serviceUrl: `${scheme}//${url.hostname}:${url.port || (tls ? DEFAULT_BINARY_TLS_PORT : DEFAULT_BINARY_PORT)}` } : {}),
    ...optional('token', param('token')),
    ...optional('tenant', param('tenant')),
    ...optional('namespace', param('namespace')),
    ...optional('subscription', param('subscription')),
    ...optional('subscriptionType', subscriptionType as SubscriptionType | undefined),
  };
}

/** The URL with a `token` parameter and user-info replaced by `***`, for logs and errors. */
export function redactUrl(raw: string): string {
  return maskUserInfo(raw.replace(/([?&]token=)[^&#]*/gi, '$1***'));
}

function derivedWebService(url: URL, tls: boolean, http: string | null): URL {
  const scheme = tls ? 'https:' : 'http:';
  if (http === null || http.trim() === '') {
    // The web service port is derived from the default binary port only: a
    // broker moved to another binary port says nothing of where its web service is.
    if (url.port !== '' && Number(url.port) !== (tls ? DEFAULT_BINARY_TLS_PORT : DEFAULT_BINARY_PORT)) {
      throw new ConfigurationError(
        `${redactUrl(url.href)} names port ${url.port}, and this binding also needs Pulsar's web service (publishing, the admin API): ` +
        `say where the web service is with ?http=<port> (${url.protocol}//${url.host}?http=${tls ? DEFAULT_HTTPS_PORT : DEFAULT_HTTP_PORT}) or give its ${scheme}// URL`,
      );
    }
    return new URL(`${scheme}//${url.hostname}:${tls ? DEFAULT_HTTPS_PORT : DEFAULT_HTTP_PORT}`);
  }
  if (/^\d+$/.test(http)) {
    const port = Number(http);
    if (port < 1 || port > 65535) throw new ConfigurationError(`the Pulsar URL's http port must be 1-65535, got ${http}`);
    return new URL(`${scheme}//${url.hostname}:${port}`);
  }
  let given: URL;
  try {
    given = new URL(http);
  } catch {
    throw new ConfigurationError(`the Pulsar URL's http parameter must be a port or an http(s):// URL, got "${http}"`);
  }
  if (given.protocol !== 'http:' && given.protocol !== 'https:') {
    throw new ConfigurationError(`the Pulsar URL's http parameter must be a port or an http(s):// URL, got "${http}"`);
  }
  return bareWebService(given);
}

function bareWebService(url: URL): URL {
  const web = new URL(`${url.protocol}//${url.host}`);
  if (url.pathname !== '/' && url.pathname !== '') web.pathname = url.pathname.replace(/\/+$/, '');
  return web;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
