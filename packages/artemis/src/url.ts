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

/** One broker of a URL: where to connect, and the URL it was read from (for masked logs and redacted errors). */
export interface ArtemisBroker {
  readonly endpoint: ArtemisEndpoint;
  readonly url: string;
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

/**
 * Reads a URL that may name several brokers: Qpid JMS's failover form
 * `failover:(amqp://user:pass@primary:5672,amqp://user:pass@backup:5672)`
 * (each inside URL as {@link parseArtemisUrl} reads it, credentials given on
 * each), or a single broker's URL. The order is the order connections are
 * tried in. Qpid JMS's `failover.*` query options are refused, not ignored:
 * the `reconnect` option sets the backoff.
 */
export function parseArtemisUrls(url: string): ArtemisEndpoint[] {
  return parseArtemisBrokers(url).map((broker) => broker.endpoint);
}

/** {@link parseArtemisUrls}, keeping each broker's own URL. */
export function parseArtemisBrokers(url: string): ArtemisBroker[] {
  const list = failoverList(url);
  if (list === undefined) return [{ endpoint: parseArtemisUrl(url), url }];
  if (list.query !== '') {
    throw new ConfigurationError(
      // Only the option names: a value may be a secret (Qpid JMS's jms.password).
      `an Artemis failover URL takes no options after its list (got ${[...new URLSearchParams(list.query).keys()].join(', ')}); `
        + `give credentials in each URL and the backoff with the \`reconnect\` option: ${maskArtemisUrl(url)}`,
    );
  }
  if (list.urls.length === 0) throw new ConfigurationError(`the Artemis failover URL names no broker: ${maskArtemisUrl(url)}`);
  return list.urls.map((each) => ({ endpoint: parseArtemisUrl(each), url: each }));
}

/** The URL with the credentials of every broker it names masked (a failover list too). */
export function maskArtemisUrl(url: string): string {
  const list = failoverList(url);
  if (list === undefined) return maskUrl(url);
  return `failover:(${list.urls.map((each) => maskUrl(each)).join(',')})${list.query === '' ? '' : '?…'}`;
}

function failoverList(url: string): { urls: string[]; query: string } | undefined {
  const m = /^failover:\((.*)\)(?:\?(.*))?$/is.exec(url.trim());
  if (m === null) return undefined;
  return { urls: m[1]!.split(',').map((each) => each.trim()).filter((each) => each !== ''), query: m[2] ?? '' };
}
