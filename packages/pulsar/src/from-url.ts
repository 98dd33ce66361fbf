import type { Transport } from '@babelqueue/core';
import type { PulsarTransportOptions } from './options.js';
import { PulsarTransport } from './transport.js';

/**
 * Builds a {@link PulsarTransport} from a `pulsar://` or `pulsar+ssl://` URL
 * (also `http(s)://` for the web service itself); the core's
 * `transportFromUrl` registry calls this for both Pulsar schemes. Options
 * other than the URL keep their defaults unless given.
 */
export function transportFromUrl(url: string | URL, options: Omit<PulsarTransportOptions, 'url'> = {}): Transport {
  return new PulsarTransport({ ...options, url: typeof url === 'string' ? url : url.href });
}
