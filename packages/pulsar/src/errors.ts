import { BabelQueueError, BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError } from '@babelqueue/core/binding';

/** The broker name this binding's errors carry. */
export const BROKER = 'Pulsar';

export { BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError };

/** An error's message for a log field (never a body). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Pulsar cannot be reached right now (the web service refused or dropped the
 * connection); nothing was sent. The core's `BrokerUnavailableError` under the
 * name this package exported before.
 */
export const PulsarUnavailableError = BrokerUnavailableError;
/** @see PulsarUnavailableError */
export type PulsarUnavailableError = BrokerUnavailableError;

/**
 * The web service refused the request itself (HTTP status on the WebSocket
 * upgrade): 401/403 are refused credentials, 404 a topic that cannot be
 * created, 409 an Exclusive subscription already taken, 5xx a broker fault.
 */
export class PulsarRefusedError extends BrokerUnavailableError {
  override readonly name: string = 'PulsarRefusedError';
  constructor(readonly status: number, message: string) {
    super(BROKER, message);
  }
}

/** An admin REST call (subscription set-up, browse, purge) failed. */
export class PulsarAdminError extends BabelQueueError {
  override readonly name = 'PulsarAdminError';
  constructor(readonly status: number, message: string) {
    super(message, { broker: BROKER });
  }
}
