import { ConfigurationError, maskUrl } from '@babelqueue/core';

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

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
