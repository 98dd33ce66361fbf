import type { TransportCapabilities } from '@babelqueue/core';
import type { BindingRules } from '@babelqueue/core/binding';

/**
 * Pulsar's settlement rules (seed 000, "Apache Pulsar"): poison with
 * dead-lettering off takes the bounded retry and is then dropped;
 * `on_unknown_urn: delete` drops poison; a version-gated message with no DLQ
 * is acknowledged, dropped and logged (Pulsar has no native DLQ the binding
 * hands it to). The DLQ is `<queue>.dlq`.
 */
export const PULSAR_RULES: BindingRules = {
  name: 'pulsar',
  poisonWithoutDeadLetter: 'bounded-retry',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'drop',
  attempts: { kind: 'max', native: 'RedeliveryCount', offset: 0 },
};

/**
 * Delays ride `deliverAfterMs` (Pulsar honours them on Shared and Key_Shared
 * subscriptions; the binding holds a delayed retry itself on the others);
 * retries re-publish; riders ride the message properties.
 */
export const PULSAR_CAPABILITIES: TransportCapabilities = {
  delayedPublish: true,
  delayedRetry: true,
  retry: true,
  headers: true,
};
