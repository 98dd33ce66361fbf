export { ArtemisTransport } from './transport.js';
export type { ArtemisTransportOptions, ReconnectOptions } from './options.js';
export { parseArtemisUrl, parseArtemisUrls } from './url.js';
export { transportFromUrl } from './from-url.js';
export type { ArtemisEndpoint } from './url.js';
export { ArtemisUnavailableError, PublishNotAcceptedError, TransportClosedError } from './errors.js';
export { ARTEMIS_CAPABILITIES, ARTEMIS_RULES } from './rules.js';
export {
  APP_ID_PROPERTY,
  ATTEMPTS_PROPERTY,
  DELAY_PROPERTY,
  DELIVERY_TIME_ANNOTATION,
  JMS_TYPE_ANNOTATION,
  SCHEMA_VERSION_PROPERTY,
} from './projection.js';
