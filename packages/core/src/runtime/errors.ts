/** What every BabelQueue error may carry besides the message. */
export interface BabelQueueErrorOptions {
  readonly cause?: unknown;
  /** The broker the error comes from (`"RabbitMQ"`, `"SQS"`, …); absent for the core's own refusals. */
  readonly broker?: string;
}

/**
 * The one base of every error this library throws, core and bindings alike, so
 * one `instanceof BabelQueueError` catches them all; `broker` names the broker
 * a binding's error comes from.
 */
export class BabelQueueError extends Error {
  override readonly name: string = 'BabelQueueError';
  /** The broker the error comes from; undefined for the core's own refusals. */
  readonly broker: string | undefined;

  constructor(message?: string, options?: BabelQueueErrorOptions) {
    super(message, options !== undefined && 'cause' in options ? { cause: options.cause } : undefined);
    this.broker = options?.broker;
  }
}

/** A configuration value is out of range or of the wrong kind. */
export class ConfigurationError extends BabelQueueError {
  override readonly name = 'ConfigurationError';
}

/** The transport cannot do what was asked (a delayed publish on the Redis legacy layout, …). */
export class CapabilityError extends BabelQueueError {
  override readonly name = 'CapabilityError';
}

/**
 * A read (scan, browse) refused because on this queue it would count a
 * delivery of every record it reads, and a record at the queue's delivery
 * limit would be dropped or dead-lettered by the broker: a RabbitMQ quorum
 * queue, which AMQP 0-9-1 can read only by taking and putting back. Pass
 * `allowCountedReads` to read anyway.
 */
export class CountedReadError extends BabelQueueError {
  override readonly name = 'CountedReadError';
  constructor(readonly queue: string, message: string) {
    super(message);
  }
}

/**
 * The broker could not be reached, the host is unknown or the credentials were
 * refused, before a worker started consuming. The message names the masked
 * target; `cause` holds the client's own error.
 */
export class ConnectError extends BabelQueueError {
  override readonly name = 'ConnectError';
  constructor(readonly target: string, detail: string, options?: { cause?: unknown }) {
    super(`cannot connect to ${target}: ${detail}`, options);
  }
}

/**
 * Throw it from a handler to fail the message now: the remaining attempts are
 * skipped and it is dead-lettered at once with reason `failed` (dropped, and
 * logged at ERROR, when dead-lettering is off).
 *
 * @example
 * ```ts
 * app.handle('urn:babel:orders:charge', async (data) => {
 *   if (data.amount_cents < 0) throw new UnrecoverableError('negative amount');
 * });
 * ```
 */
export class UnrecoverableError extends Error {
  override readonly name: string = 'UnrecoverableError';
}

/** The handler ran longer than `handlerTimeoutMs`; its `message.signal` was aborted and the delivery takes the retry path. */
export class HandlerTimeoutError extends BabelQueueError {
  override readonly name = 'HandlerTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`the handler did not finish within ${timeoutMs} ms`);
  }
}

/** The worker's shutdown deadline passed while the handler was still running; the delivery is left for redelivery. */
export class ShutdownError extends BabelQueueError {
  override readonly name = 'ShutdownError';
  constructor(readonly deadlineMs: number) {
    super(`the worker shut down; the handler did not finish within the ${deadlineMs} ms shutdown deadline`);
  }
}
