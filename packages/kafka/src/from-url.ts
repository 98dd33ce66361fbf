import type { KafkaTransportOptions } from './options.js';
import { KafkaTransport } from './transport.js';

/**
 * A {@link KafkaTransport} for `kafka://host:port[,host:port][?groupId=…&retryTiersMs=…]`
 * (see `parseKafkaUrl`). `options` add what a URL cannot say (a logger, kafkajs settings).
 * Registered for the `kafka://` scheme of the core's `transportFromUrl`.
 */
export function kafkaTransportFromUrl(url: string | URL, options: Omit<KafkaTransportOptions, 'url' | 'brokers'> = {}): KafkaTransport {
  return new KafkaTransport({ ...options, url: typeof url === 'string' ? url : url.href });
}

/** The binding-package entry point the core's URL registry loads for `kafka://`. */
export function transportFromUrl(url: string | URL): KafkaTransport {
  return kafkaTransportFromUrl(url);
}
