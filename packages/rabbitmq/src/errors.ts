import { BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError } from '@babelqueue/core/binding';

// RabbitMQ has no error of its own: its failures are the core's error family
// (`broker: "RabbitMQ"`), so `instanceof` holds across brokers.

/** The broker name this binding's errors carry. */
export const BROKER = 'RabbitMQ';

export { BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError };

/**
 * The broker cannot be reached right now; nothing was sent. The core's
 * `BrokerUnavailableError` under the name this package exported before.
 */
export const RabbitMqUnavailableError = BrokerUnavailableError;
/** @see RabbitMqUnavailableError */
export type RabbitMqUnavailableError = BrokerUnavailableError;
