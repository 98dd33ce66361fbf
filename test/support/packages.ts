/**
 * Every package this repository publishes: its name, its folder under
 * packages/, and one function or class it exports (to tell a real export from
 * an empty module). A new package adds its row here.
 */
export const PACKAGES: readonly (readonly [name: string, dir: string, symbol: string])[] = [
  ['@babelqueue/core', 'core', 'createApp'],
  ['@babelqueue/payload-schema', 'payload-schema', 'PayloadSchemas'],
  ['@babelqueue/redis', 'redis', 'RedisTransport'],
  ['@babelqueue/rabbitmq', 'rabbitmq', 'RabbitMqTransport'],
  ['@babelqueue/kafka', 'kafka', 'KafkaTransport'],
  ['@babelqueue/sqs', 'sqs', 'SqsTransport'],
  ['@babelqueue/aws-lambda', 'aws-lambda', 'sqsHandler'],
  ['@babelqueue/nestjs', 'nestjs', 'BabelQueueModule'],
  ['@babelqueue/pulsar', 'pulsar', 'PulsarTransport'],
  ['@babelqueue/artemis', 'artemis', 'ArtemisTransport'],
  ['@babelqueue/otel', 'otel', 'otelInstrumentation'],
  ['@babelqueue/gdpr', 'gdpr', 'protect'],
  ['@babelqueue/idempotency', 'idempotency', 'RedisIdempotencyStore'],
  ['@babelqueue/outbox', 'outbox', 'OutboxRelay'],
  ['@babelqueue/azure-service-bus', 'azure-service-bus', 'AzureServiceBusTransport'],
  ['@babelqueue/console', 'console', 'startConsole'],
  ['babelqueue', 'cli', 'main'],
];

/**
 * Subpath entries beside a package's root (`exports` keys other than "."): the
 * import name, the package's folder, the entry's file under dist/ and one
 * function or class it exports. A new subpath export adds its row here.
 */
export const SUBPATH_ENTRIES: readonly (readonly [name: string, dir: string, file: string, symbol: string])[] = [
  ['@babelqueue/core/binding', 'core', 'binding', 'SettleOnce'],
];
