import type { BindingRules } from '@babelqueue/core';

/**
 * Redis's settlement rules, the same for both layouts (seed 000): poison is
 * dead-lettered in every configuration (a DLQ opt-out and `delete` change
 * nothing; without a DLQ it goes to the default `<queue>.dlq`). Redis has no
 * native version gate (`none`): the runtime never gates its deliveries.
 */
export function redisRules(name: 'redis-legacy' | 'redis-zset'): BindingRules {
  return {
    name,
    poisonWithoutDeadLetter: 'dead-letter-default',
    deleteStrategyDropsPoison: false,
    versionGateWithoutDeadLetter: 'none',
  };
}
