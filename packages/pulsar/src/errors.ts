/** Pulsar cannot be reached right now (the web service refused or dropped the connection); nothing was sent. */
export class PulsarUnavailableError extends Error {
  override readonly name: string = 'PulsarUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The web service refused the request itself (HTTP status on the WebSocket
 * upgrade): 401/403 are refused credentials, 404 a topic that cannot be
 * created, 409 an Exclusive subscription already taken, 5xx a broker fault.
 */
export class PulsarRefusedError extends PulsarUnavailableError {
  override readonly name: string = 'PulsarRefusedError';
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * A publish got no positive send receipt: the broker answered with an error
 * (`result` other than `ok`), or the WebSocket closed before the receipt came.
 * In the second case the message may or may not be stored.
 */
export class PublishNotConfirmedError extends Error {
  override readonly name = 'PublishNotConfirmedError';
  constructor(readonly topic: string, reason: string, options?: { cause?: unknown }) {
    super(`publish to "${topic}" was not confirmed by Pulsar: ${reason}`, options);
  }
}

/** An admin REST call (subscription set-up, browse, purge) failed. */
export class PulsarAdminError extends Error {
  override readonly name = 'PulsarAdminError';
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The transport was closed; no further work is accepted. */
export class TransportClosedError extends Error {
  override readonly name = 'TransportClosedError';
  constructor() {
    super('the Pulsar transport is closed');
  }
}
