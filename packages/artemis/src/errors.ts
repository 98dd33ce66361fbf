/** The broker cannot be reached right now; nothing was sent. */
export class ArtemisUnavailableError extends Error {
  override readonly name = 'ArtemisUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The broker did not accept a publish: it answered `rejected`, `released` or
 * `modified` instead of `accepted`, refused the link, or the connection closed
 * before the outcome arrived (then the message may or may not be on the queue).
 */
export class PublishNotAcceptedError extends Error {
  override readonly name = 'PublishNotAcceptedError';
  constructor(readonly queue: string, reason: string, options?: { cause?: unknown }) {
    super(`publish to "${queue}" was not accepted by Artemis: ${reason}`, options);
  }
}

/** The transport was closed; no further work is accepted. */
export class TransportClosedError extends Error {
  override readonly name = 'TransportClosedError';
  constructor() {
    super('the Artemis transport is closed');
  }
}
