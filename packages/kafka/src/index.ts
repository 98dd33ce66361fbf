export { KafkaTransport } from './transport.js';
export type { KafkaTransportOptions } from './options.js';
export { KAFKA_RULES } from './rules.js';
export type { Ordering } from './partition-batch.js';
export { KafkaReinjector, DEFAULT_CONSUMER_TUNING, DEFAULT_REINJECT_GROUP_ID, type KafkaReinjectorOptions, type ReinjectRunOptions } from './reinjector.js';
export type { KafkaConnectionOptions } from './connection.js';
export type { ConsumerTuning } from './consume-loop.js';
export {
  DEFAULT_RETRY_TIERS_MS,
  retryTopicName,
  parseRetryTopic,
  tierForRetry,
  tierForDelay,
  validateRetryTiers,
  type RetryTier,
} from './retry-tiers.js';
export { KafkaHeader, kafkaAttempts, kafkaSchemaVersion } from './projection.js';
export { reinjectDueAt } from './reinject-schedule.js';
export { ensureKafkaTopics, retryTopicConfig, type KafkaTopicsSpec } from './topics.js';
export { parseKafkaUrl, type KafkaUrlSettings } from './url.js';
export { kafkaTransportFromUrl, transportFromUrl } from './from-url.js';
