/** The broker cannot be reached right now; nothing was sent. */
export class RabbitMqUnavailableError extends Error {
  override readonly name = 'RabbitMqUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The broker did not confirm a publish: it refused it (`basic.nack`, e.g. a
 * queue at `x-max-length` with `x-overflow: reject-publish`), returned it as
 * unroutable (the queue does not exist), or the channel closed before the
 * confirm arrived. The message may or may not be on the queue in the last case.
 */
export class PublishNotConfirmedError extends Error {
  override readonly name = 'PublishNotConfirmedError';
  constructor(readonly queue: string, reason: string, options?: { cause?: unknown }) {
    super(`publish to "${queue}" was not confirmed by RabbitMQ: ${reason}`, options);
  }
}

/** The transport was closed; no further work is accepted. */
export class TransportClosedError extends Error {
  override readonly name = 'TransportClosedError';
  constructor() {
    super('the RabbitMQ transport is closed');
  }
}
