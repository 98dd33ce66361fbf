import type { BindingRules, TransportCapabilities } from '@babelqueue/core';

/**
 * RabbitMQ's settlement rules. The seeds name no RabbitMQ-specific poison or
 * version-gate route, so the binding follows the Artemis/Pulsar reading: with
 * dead-lettering off, poison and a version-gated message are acknowledged,
 * dropped and logged (never handed to the broker's own DLX, which the user may
 * not have configured), and `on_unknown_urn: delete` drops poison.
 */
export const RABBITMQ_RULES: BindingRules = {
  name: 'rabbitmq',
  poisonWithoutDeadLetter: 'drop',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'drop',
};

/** Delays (publish and retry) ride per-delay TTL holding queues; retries re-publish; riders ride the AMQP headers. */
export const RABBITMQ_CAPABILITIES: TransportCapabilities = {
  delayedPublish: true,
  delayedRetry: true,
  retry: true,
  headers: true,
};
