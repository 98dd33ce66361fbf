import type { Transport } from '@babelqueue/core';
import type { AzureServiceBusTransportOptions } from './options.js';
import { AzureServiceBusTransport } from './transport.js';

/**
 * Builds an {@link AzureServiceBusTransport} from an `sb://` URL or a
 * connection string; the core's `transportFromUrl` registry calls this for
 * `sb://`, `servicebus://` and `azureservicebus://`.
 */
export function transportFromUrl(url: string | URL, options: Omit<AzureServiceBusTransportOptions, 'url' | 'connectionString'> = {}): Transport {
  return new AzureServiceBusTransport({ ...options, url: typeof url === 'string' ? url : url.href });
}
