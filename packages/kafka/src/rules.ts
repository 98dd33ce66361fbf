import type { TransportCapabilities } from '@babelqueue/core';
import type { BindingRules } from '@babelqueue/core/binding';

/**
 * The Kafka binding's settlement rules: poison without a DLQ takes the bounded
 * tier retry and is then dropped (the Go/Python behaviour), and with no tiers
 * is committed, dropped and logged. A version-gated record with no DLQ takes
 * the same poison path (seed 000: "§6.5 poison/DLQ path"), its gate kept on
 * every retry copy, so a newer consumer of the group can still take it.
 */
export const KAFKA_RULES: BindingRules = {
  name: 'kafka',
  poisonWithoutDeadLetter: 'bounded-retry',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'bounded-retry',
  attempts: { kind: 'native-else-body', native: 'bq-attempts' },
  delayAdvice: 'on Kafka the retry tier decides the delay (retryTiersMs)',
  retryPathAdvice: 'on Kafka that stalls the partition; configure retry tiers (retryTiersMs: DEFAULT_RETRY_TIERS_MS)',
};

/**
 * Retries and delayed publishes need retry tiers (`tiered`). Kafka ignores
 * retry_backoff: the tier decides the delay, so no retry carries a delay of its own.
 */
export function kafkaCapabilities(tiered: boolean): TransportCapabilities {
  return { delayedPublish: tiered, delayedRetry: false, retry: tiered, headers: true };
}
