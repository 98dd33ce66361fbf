import { type Transport } from '@babelqueue/core';
import type { SqsTransportOptions } from './options.js';
import { SqsTransport } from './transport.js';
import { parseSqsUrl } from './url.js';

/**
 * Builds an {@link SqsTransport} from an `sqs://` URL (see {@link parseSqsUrl});
 * the core's `transportFromUrl` registry calls this. `options` add to (and
 * override) what the URL says.
 */
export function transportFromUrl(url: string | URL, options: SqsTransportOptions = {}): Transport {
  return new SqsTransport({ ...parseSqsUrl(url), ...options });
}
