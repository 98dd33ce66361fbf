import type { Transport } from '@babelqueue/core';
import { ConfigurationError, maskUrl } from '@babelqueue/core';
import type { ArtemisTransportOptions } from './options.js';
import { ArtemisTransport } from './transport.js';

/** Where and how to connect, read from the URL. */
export interface ArtemisEndpoint {
  readonly host: string;
  readonly port: number;
  /** SASL PLAIN when set; SASL ANONYMOUS otherwise. */
  readonly username?: string;
  readonly password?: string;
  readonly tls: boolean;
}

/** Plain schemes first, then their TLS forms, as the Python SDK spells them (plus AMQP's own). */
const SCHEMES: Readonly<Record<string, { tls: boolean; port: number }>> = {
  'artemis:': { tls: false, port: 5672 },
  'amqp:': { tls: false, port: 5672 },
  'artemis+ssl:': { tls: true, port: 5671 },
  'amqps:': { tls: true, port: 5671 },
};

/**
 * Reads `artemis://user:pass@host:port` (the Python SDK's spelling; TLS:
 * `artemis+ssl://`), or the AMQP forms `amqp://` / `amqps://`. Without a port
 * it is AMQP's 5672 (5671 with TLS); credentials are percent-decoded and select
 * SASL PLAIN. Anything else is a {@link ConfigurationError} with the password masked.
 */
export function parseArtemisUrl(url: string): ArtemisEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError(`not a valid Artemis URL: ${maskUrl(url)}`);
  }
  const scheme = SCHEMES[parsed.protocol];
  if (scheme === undefined) {
    throw new ConfigurationError(`an Artemis URL starts with artemis://, artemis+ssl://, amqp:// or amqps://, got ${maskUrl(url)}`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new ConfigurationError(`the Artemis URL names no host: ${maskUrl(url)}`);
  const endpoint: { -readonly [K in keyof ArtemisEndpoint]: ArtemisEndpoint[K] } = {
    host,
    port: parsed.port === '' ? scheme.port : Number(parsed.port),
    tls: scheme.tls,
  };
  if (parsed.username !== '') endpoint.username = decode(parsed.username);
  if (parsed.password !== '') endpoint.password = decode(parsed.password);
  return endpoint;
}

/**
 * Builds an {@link ArtemisTransport} from a URL; the core's `transportFromUrl`
 * registry calls this for `artemis://` and `artemis+ssl://`. Options other than
 * the URL keep their defaults unless given.
 */
export function transportFromUrl(url: string | URL, options: Omit<ArtemisTransportOptions, 'url'> = {}): Transport {
  return new ArtemisTransport({ ...options, url: typeof url === 'string' ? url : url.href });
}

/** Replaces the URL's password (or a lone user-info token) wherever it occurs in `text`. */
export function redactCredentials(text: string, url: string): string {
  let endpoint: ArtemisEndpoint;
  try {
    endpoint = parseArtemisUrl(url);
  } catch {
    return text;
  }
  const secret = endpoint.password ?? endpoint.username ?? '';
  return secret === '' ? text : text.split(secret).join('***');
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
