/** The runtime refuses something the specification says must be refused (bad option, missing capability). */
export class BabelQueueError extends Error {
  override readonly name: string = 'BabelQueueError';
}

/** A configuration value is out of range or of the wrong kind. */
export class ConfigurationError extends BabelQueueError {
  override readonly name = 'ConfigurationError';
}

/** The transport cannot do what was asked (a delayed publish on the Redis legacy layout, …). */
export class CapabilityError extends BabelQueueError {
  override readonly name = 'CapabilityError';
}

/** Thrown by the `fail` strategy's bookkeeping: a valid envelope whose URN has no handler. */
export class UnknownUrnError extends BabelQueueError {
  override readonly name = 'UnknownUrnError';
  constructor(readonly urn: string) {
    super(`no handler is registered for ${urn}`);
  }
}
