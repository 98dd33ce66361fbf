import type { Transport } from '@babelqueue/core';
import type { ArtemisTransportOptions } from './options.js';
import { ArtemisTransport } from './transport.js';

/**
 * Builds an {@link ArtemisTransport} from a URL; the core's `transportFromUrl`
 * registry calls this for `artemis://` and `artemis+ssl://`. Options other than
 * the URL keep their defaults unless given.
 */
export function transportFromUrl(url: string | URL, options: Omit<ArtemisTransportOptions, 'url'> = {}): Transport {
  return new ArtemisTransport({ ...options, url: typeof url === 'string' ? url : url.href });
}
