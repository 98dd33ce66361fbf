/** The transport was closed; no further work is accepted. */
export class TransportClosedError extends Error {
  override readonly name = 'TransportClosedError';
  constructor() {
    super('the Azure Service Bus transport is closed');
  }
}
