export { RabbitMqTransport } from './transport.js';
export type { PollOptions, RabbitMqTransportOptions, ReconnectOptions } from './options.js';
export { transportFromUrl } from './from-url.js';
export { PublishNotConfirmedError, RabbitMqUnavailableError, TransportClosedError } from './errors.js';
export { RABBITMQ_CAPABILITIES, RABBITMQ_QUORUM_RULES, RABBITMQ_RULES } from './rules.js';
export { delayQueueName } from './queues.js';
export {
  amqpInteger,
  APP_ID,
  ATTEMPTS_HEADER,
  projectProperties,
  SCHEMA_VERSION_HEADER,
  SOURCE_LANG_HEADER,
} from './projection.js';
