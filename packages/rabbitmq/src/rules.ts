import type { TransportCapabilities } from '@babelqueue/core';
import type { BindingRules } from '@babelqueue/core/binding';

/**
 * RabbitMQ's settlement rules. The seeds name no RabbitMQ-specific poison
 * route, so the binding follows the Artemis/Pulsar reading: with dead-lettering
 * off, poison is acknowledged, dropped and logged (never handed to the broker's
 * own DLX, which the user may not have configured), and `on_unknown_urn: delete`
 * drops poison. The seeds define no RabbitMQ version gate and the Python SDK
 * has none (`none`): `x-schema-version` is a projection, every body is decoded
 * and its `meta.schema_version` checked.
 */
export const RABBITMQ_RULES: BindingRules = {
  name: 'rabbitmq',
  poisonWithoutDeadLetter: 'drop',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'none',
  attempts: { kind: 'body' },
};

/**
 * Delays (publish and retry) ride per-delay TTL holding queues; retries
 * re-publish; riders ride the AMQP headers. AMQP 0-9-1 has no peek: the scan
 * holds what it read unacknowledged until it ends (leased).
 */
export const RABBITMQ_CAPABILITIES: TransportCapabilities = {
  delayedPublish: true,
  delayedRetry: true,
  retry: true,
  headers: true,
  scan: 'leased',
};

/**
 * The rules of a transport whose queues are quorum queues (`queueType:
 * 'quorum'`): RabbitMQ's, with attempts `max(body.attempts, x-delivery-count)`.
 * The seeds define attempts for classic queues only (the body's count); a
 * quorum queue also counts every return of a message to the queue (a worker
 * killed mid-handler, a lost channel) in `x-delivery-count` (0-based: absent on
 * the first delivery, 1 after one return), and drops or dead-letters the
 * message at its delivery limit. Counting those returns as attempts keeps the
 * App's cap ahead of the broker's: a message that keeps killing its worker
 * reaches `maxAttempts` and is dead-lettered by the App, with a record, before
 * the broker drops it silently. The max never lowers the body's count.
 */
export const RABBITMQ_QUORUM_RULES: BindingRules = {
  ...RABBITMQ_RULES,
  attempts: { kind: 'max', native: 'x-delivery-count', offset: 0 },
};
