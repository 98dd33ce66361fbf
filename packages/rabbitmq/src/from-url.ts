import type { Transport } from '@babelqueue/core';
import type { RabbitMqTransportOptions } from './options.js';
import { RabbitMqTransport } from './transport.js';

/**
 * Builds a {@link RabbitMqTransport} from an `amqp://` or `amqps://` URL; the
 * core's `transportFromUrl` registry calls this for both schemes. Options other
 * than the URL keep their defaults unless given.
 */
export function transportFromUrl(url: string | URL, options: Omit<RabbitMqTransportOptions, 'url'> = {}): Transport {
  return new RabbitMqTransport({ ...options, url: typeof url === 'string' ? url : url.href });
}
