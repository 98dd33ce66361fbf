import { ConfigurationError, consoleLogger, type Logger } from '@babelqueue/core';

/** Options of {@link sqsHandler}. Unknown keys are refused. */
export interface SqsHandlerOptions {
  /**
   * Records of a standard queue handled at once. Default 1 (one after the
   * other, as `app.run()`). A FIFO batch is always handled in order, one at a time.
   */
  readonly concurrency?: number;
  /**
   * How much of the function's remaining time (`context.getRemainingTimeInMillis()`)
   * is kept back from each handler's timeout, for the settlement (a DLQ write,
   * a release) and the response. A record that would start with less left is
   * not begun and is reported as failed. Default 1000 ms.
   */
  readonly timeoutMarginMs?: number;
  /**
   * Whether a retry gives the message back after the App's `retryBackoff`
   * delay with `ChangeMessageVisibility` (as the SQS binding's worker does),
   * and a record not begun at once. `false` leaves them to the queue's
   * visibility timeout. Default true.
   */
  readonly releaseRetries?: boolean;
  /** For this adapter's own lines (records not begun, a failed release). Default: one line per event on stderr. */
  readonly logger?: Logger;
}

export interface ResolvedHandlerOptions {
  readonly concurrency: number;
  readonly timeoutMarginMs: number;
  readonly releaseRetries: boolean;
  readonly logger: Logger;
}

const KEYS = new Set(['concurrency', 'timeoutMarginMs', 'releaseRetries', 'logger']);

export function resolveHandlerOptions(options: SqsHandlerOptions): ResolvedHandlerOptions {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('sqsHandler options must be an object');
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) throw new ConfigurationError(`unknown sqsHandler option "${key}" (known: ${[...KEYS].join(', ')})`);
  }
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigurationError(`sqsHandler concurrency must be an integer >= 1, got ${String(concurrency)}`);
  }
  const timeoutMarginMs = options.timeoutMarginMs ?? 1000;
  if (typeof timeoutMarginMs !== 'number' || !Number.isFinite(timeoutMarginMs) || timeoutMarginMs < 0) {
    throw new ConfigurationError(`sqsHandler timeoutMarginMs must be a number of milliseconds >= 0, got ${String(timeoutMarginMs)}`);
  }
  const releaseRetries = options.releaseRetries ?? true;
  if (typeof releaseRetries !== 'boolean') throw new ConfigurationError(`sqsHandler releaseRetries must be a boolean, got ${typeof releaseRetries}`);
  return { concurrency, timeoutMarginMs, releaseRetries, logger: options.logger ?? consoleLogger() };
}
