import { ConfigurationError, maskUrl } from '@babelqueue/core';

// Connection URLs carry credentials (`amqp://user:password@host`). Nothing the
// binding logs or throws may print them: URLs go through the core's `maskUrl`,
// client error texts through the core's `redactCredentials`.

/** Throws a clear {@link ConfigurationError} for anything but an amqp:// or amqps:// URL (credentials masked). */
export function assertAmqpUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError(`not a valid AMQP URL: ${maskUrl(url)}`);
  }
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') {
    throw new ConfigurationError(`a RabbitMQ URL starts with amqp:// or amqps://, got ${maskUrl(url)}`);
  }
}
