import { getSystemErrorName } from 'node:util';

/** The transport was closed; no further work is accepted. */
export class TransportClosedError extends Error {
  override readonly name = 'TransportClosedError';
  constructor() {
    super('the Azure Service Bus transport is closed');
  }
}

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
