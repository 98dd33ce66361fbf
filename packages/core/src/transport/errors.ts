import { BabelQueueError, type BabelQueueErrorOptions } from '../runtime/errors.js';

// Errors every broker can raise, in the one family (`BabelQueueError`, with
// `broker` set), so `instanceof TransportClosedError` holds whichever binding
// threw it. A binding keeps only the errors no other broker has.

/** The transport was closed; no further work is accepted. Closing is terminal. */
export class TransportClosedError extends BabelQueueError {
  override readonly name = 'TransportClosedError';
  constructor(broker: string) {
    super(`the ${broker} transport is closed`, { broker });
  }
}

/** The broker cannot be reached right now; nothing was sent. */
export class BrokerUnavailableError extends BabelQueueError {
  override readonly name: string = 'BrokerUnavailableError';
  constructor(broker: string, message: string, options?: Omit<BabelQueueErrorOptions, 'broker'>) {
    super(message, { ...options, broker });
  }
}

/**
 * The broker did not confirm a publish: it refused it, returned it as
 * unroutable, or the connection closed before the outcome arrived (then the
 * message may or may not be on the queue). `queue` is the queue (Pulsar: the
 * topic) the publish went to.
 */
export class PublishNotConfirmedError extends BabelQueueError {
  override readonly name = 'PublishNotConfirmedError';
  constructor(broker: string, readonly queue: string, reason: string, options?: Omit<BabelQueueErrorOptions, 'broker'>) {
    super(`publish to "${queue}" was not confirmed by ${broker}: ${reason}`, { ...options, broker });
  }
}
