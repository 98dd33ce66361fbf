import type { TransportCapabilities } from '@babelqueue/core';
import type { BindingRules } from '@babelqueue/core/binding';

/**
 * Artemis's settlement rules (seed 000): with dead-lettering off, poison and a
 * version-gated message are acknowledged, dropped and logged (Artemis's own
 * max-delivery-attempts is not involved); `on_unknown_urn: delete` drops poison.
 */
export const ARTEMIS_RULES: BindingRules = {
  name: 'artemis',
  poisonWithoutDeadLetter: 'drop',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'drop',
  attempts: { kind: 'max', native: 'delivery-count', offset: 0 },
};

/**
 * Delays are native (`x-opt-delivery-time`), for a publish and for a retry
 * (re-sent with the delay); riders ride the application properties.
 */
export const ARTEMIS_CAPABILITIES: TransportCapabilities = {
  delayedPublish: true,
  delayedRetry: true,
  retry: true,
  headers: true,
};
