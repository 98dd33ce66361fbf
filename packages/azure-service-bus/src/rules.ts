import type { TransportCapabilities } from '@babelqueue/core';
import type { BindingRules } from '@babelqueue/core/binding';

/**
 * Azure Service Bus's settlement rules (seed 000, "Azure Service Bus"): with
 * dead-lettering off, poison and a version-gated message are left to Service
 * Bus — an explicit dead-letter into the entity's `$DeadLetterQueue` with a
 * reason and description, body unchanged — and `on_unknown_urn: delete`
 * completes (drops) poison.
 */
export const ASB_RULES: BindingRules = {
  name: 'asb',
  poisonWithoutDeadLetter: 'native',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'native',
  attempts: { kind: 'max', native: 'DeliveryCount', offset: -1 },
};

/**
 * Delays ride `scheduledEnqueueTimeUtc` (publish and retry); an immediate retry
 * abandons the lock (native redelivery); riders ride the application properties.
 */
export const ASB_CAPABILITIES: TransportCapabilities = {
  delayedPublish: true,
  delayedRetry: true,
  retry: true,
  headers: true,
};
