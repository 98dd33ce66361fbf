import { BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError } from '@babelqueue/core/binding';

// Artemis has no error of its own: its failures are the core's error family
// (`broker: "Artemis"`), so `instanceof` holds across brokers.

/** The broker name this binding's errors carry. */
export const BROKER = 'Artemis';

export { BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError };

/**
 * The broker cannot be reached right now; nothing was sent. The core's
 * `BrokerUnavailableError` under the name this package exported before.
 */
export const ArtemisUnavailableError = BrokerUnavailableError;
/** @see ArtemisUnavailableError */
export type ArtemisUnavailableError = BrokerUnavailableError;

/**
 * The broker did not accept a publish (`rejected`, `released` or `modified`
 * instead of `accepted`, a refused link, or a connection closed before the
 * outcome). The core's `PublishNotConfirmedError` under the name this package
 * exported before.
 */
export const PublishNotAcceptedError = PublishNotConfirmedError;
/** @see PublishNotAcceptedError */
export type PublishNotAcceptedError = PublishNotConfirmedError;
