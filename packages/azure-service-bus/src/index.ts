export { AzureServiceBusTransport } from './transport.js';
export type { AzureServiceBusTransportOptions, SessionSource } from './options.js';
export { ASB_SCHEMES, parseAddress, transportFromUrl } from './url.js';
export type { AsbAddress } from './url.js';
export { TransportClosedError } from './errors.js';
export { ASB_CAPABILITIES, ASB_RULES } from './rules.js';
export { POISON_REASON, VERSION_GATE_REASON } from './delivery.js';
export { SCHEMA_VERSION_PROPERTY, toServiceBusMessage } from './projection.js';
