// Reading the errors of @aws-sdk/client-sqs: service errors carry their code
// as `name` (older query-protocol codes as `Code`), network errors as `code`.

/** The error's SQS code (`QueueDoesNotExist`), Node code (`ECONNREFUSED`) or name. */
export function errorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return '';
  const e = error as { name?: unknown; code?: unknown; Code?: unknown };
  for (const value of [e.Code, e.code, e.name]) {
    if (typeof value === 'string' && value !== '' && value !== 'Error') return value;
  }
  return '';
}

const QUEUE_MISSING = new Set(['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue']);

/** The queue does not exist (or was deleted). */
export function isQueueMissing(error: unknown): boolean {
  return QUEUE_MISSING.has(errorCode(error)) || QUEUE_MISSING.has((error as { name?: string } | null)?.name ?? '');
}

/** Signed with valid credentials, but not allowed: the endpoint and the credentials work. */
export function isAccessDenied(error: unknown): boolean {
  return /^AccessDenied/.test(errorCode(error));
}

const CREDENTIALS = new Set([
  'CredentialsProviderError', 'InvalidClientTokenId', 'SignatureDoesNotMatch', 'UnrecognizedClientException',
  'InvalidSecurity', 'MissingAuthenticationToken', 'IncompleteSignature', 'ExpiredToken', 'InvalidAccessKeyId',
]);

/**
 * An error no retry can fix: missing or refused credentials, no region, or any
 * other 4xx answer except throttling.
 */
export function isFatalClientError(error: unknown): boolean {
  const code = errorCode(error);
  if (CREDENTIALS.has(code) || CREDENTIALS.has((error as { name?: string } | null)?.name ?? '')) return true;
  if (error instanceof Error && /region is missing/i.test(error.message)) return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  return status !== undefined && status >= 400 && status < 500 && status !== 429 && !/Throttl/i.test(code);
}

/** A receipt handle that no longer holds the message (deleted, or its visibility lapsed and another consumer has it). */
export function isReceiptGone(code: string): boolean {
  return code === 'ReceiptHandleIsInvalid' || code === 'MessageNotInflight';
}

/** A short text for a log line: the code and the message, never a body. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = errorCode(error);
  return code !== '' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message || code;
}
