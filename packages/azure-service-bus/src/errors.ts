import { getSystemErrorName } from 'node:util';
import { TransportClosedError } from '@babelqueue/core/binding';

/** The broker name this binding's errors carry. */
export const BROKER = 'Azure Service Bus';

export { TransportClosedError };

/** Socket errors that mean "nothing answers at that address (yet)". */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/**
 * Whether a connect attempt failed because the namespace did not answer: a
 * refused or reset TCP connection (the SDK reports it as a non-retryable
 * `MessagingError` that keeps the socket error's negative `errno`), or an
 * error the SDK itself marks retryable. An unknown host or refused
 * credentials are not: retrying cannot fix them.
 */
export function isUnreachable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { errno, retryable } = error as { errno?: unknown; retryable?: unknown };
  if (retryable === true) return true;
  if (typeof errno !== 'number' || errno >= 0) return false;
  try {
    return UNREACHABLE.has(getSystemErrorName(errno));
  } catch {
    return false;
  }
}

/**
 * Service Bus error codes no reconnect can fix: the credentials were refused,
 * the entity does not exist or is disabled. A consume loop meeting one ends.
 */
const FATAL_CODES = new Set(['UnauthorizedAccess', 'UnauthorizedError', 'MessagingEntityNotFound', 'MessagingEntityDisabled']);

/**
 * Whether a receive failed for a reason that passes by itself: a cut or reset
 * connection, a timeout, a busy namespace. The SDK reopens its connection and
 * link on the next call. A link detached by a cut fails the pending receive
 * with a plain `Error` ("Unknown error occurred on the AMQP connection"), or
 * with the socket's error as a `GeneralError`, so everything is transient but
 * the fatal codes above and programming errors (TypeError, RangeError, …).
 */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || error instanceof SyntaxError) return false;
  const code = (error as { code?: unknown }).code;
  return !(typeof code === 'string' && FATAL_CODES.has(code));
}

/** An error's name, code and message for a log line: never a message body. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${error.name}${typeof code === 'string' ? ` (${code})` : ''}: ${error.message}`;
}
