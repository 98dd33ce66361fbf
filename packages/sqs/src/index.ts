export { SqsTransport } from './transport.js';
export type { SqsTransportOptions } from './options.js';
export { DEFAULT_MAX_MESSAGE_BYTES, MAX_DELAY_SECONDS, MAX_VISIBILITY_SECONDS, MAX_WAIT_TIME_SECONDS } from './options.js';
export { parseSqsUrl, transportFromUrl } from './url.js';
export {
  BatchEntryError,
  DelayNotSupportedError,
  InvalidBodyError,
  MessageTooLargeError,
  QueueNotFoundError,
  TransportClosedError,
  WorkQueueBrowseError,
} from './errors.js';
export { SQS_CAPABILITIES, SQS_RULES } from './rules.js';
export { BROWSE_LEASE_SECONDS, isDeadLetterQueueName } from './scan.js';
