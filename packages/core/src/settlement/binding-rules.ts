/**
 * The per-broker rules the specification states, declared by each binding and
 * read by the settlement policy. A binding never re-implements a consume rule;
 * it only says which variant of it applies to its broker.
 */
export interface BindingRules {
  /** Binding name, e.g. "redis-zset", "rabbitmq", "kafka", "memory". */
  readonly name: string;
  /**
   * Poison (a body that does not decode to an accepted envelope) when no DLQ is
   * configured:
   * - `dead-letter-default`: written to the default `<queue>.dlq` anyway (Redis: a DLQ opt-out never covers poison)
   * - `native`: left to the broker's own DLQ (SQS, Azure Service Bus)
   * - `bounded-retry`: retried up to max attempts, then dropped (Pulsar, Kafka)
   * - `drop`: acknowledged, dropped and logged (Artemis, RabbitMQ, memory)
   */
  readonly poisonWithoutDeadLetter: 'dead-letter-default' | 'native' | 'bounded-retry' | 'drop';
  /** `on_unknown_urn: delete` drops poison (true everywhere but Redis, where poison is always dead-lettered). */
  readonly deleteStrategyDropsPoison: boolean;
  /**
   * A version-gated delivery with no DLQ and a strategy other than delete:
   * - `drop`: acknowledged, dropped and logged (Pulsar, Artemis, memory)
   * - `native`: left to the broker's own DLQ (SQS, Azure Service Bus)
   * - `bounded-retry`: the poison path without a DLQ (Kafka, seed 000 §6.5): retried
   *   through the retry tiers up to max attempts, its gate kept, then dropped;
   *   without tiers committed, dropped and logged
   * - `none`: the binding has no version gate (the seeds define none for Redis and
   *   RabbitMQ): the runtime never gates its deliveries and decodes every body
   */
  readonly versionGateWithoutDeadLetter: 'drop' | 'native' | 'bounded-retry' | 'none';
  /** DLQ name for a queue: `<queue>.dlq` everywhere but SQS (`<queue>-dlq`, `.fifo` kept last). */
  readonly dlqName?: (queue: string, suffix: string | undefined) => string;
}
