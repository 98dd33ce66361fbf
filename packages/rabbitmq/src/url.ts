import { ConfigurationError, maskUrl } from '@babelqueue/core';

// Connection URLs carry credentials (`amqp://user:password@host`). Nothing the
// binding logs or throws may print them: URLs go through the core's `maskUrl`,
// client error texts through `redactCredentials`.

/** Replaces the URL's password (or a lone user-info token) wherever it occurs in `text`. */
export function redactCredentials(text: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return text;
  }
  const secret = parsed.password !== '' ? parsed.password : parsed.username;
  let out = text;
  for (const form of new Set([secret, safeDecode(secret)])) {
    if (form !== '') out = out.split(form).join('***');
  }
  return out;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

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
