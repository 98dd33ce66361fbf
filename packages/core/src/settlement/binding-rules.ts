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
  /**
   * How a delivery's attempt count is reconciled from the broker's own counter
   * (`Delivery.nativeAttempts`) and the body's `attempts`; the runtime applies
   * it with `reconcileAttempts` (packages/core/src/retry/reconcile.ts).
   */
  readonly attempts: AttemptsFormula;
  /**
   * What to tell a user whose `retryBackoff` this binding cannot apply
   * (`capabilities.delayedRetry` false): logged once when consuming begins.
   * Absent where the binding delays retries.
   */
  readonly delayAdvice?: string;
  /**
   * What to tell a user of a transport with no retry path
   * (`capabilities.retry` false), such as how to configure one: logged once
   * when consuming begins.
   */
  readonly retryPathAdvice?: string;
}

/**
 * The spec's attempts reconciliation of one binding, as data:
 * - `body`: the broker keeps no delivery counter; the body's count is the count
 *   (Redis, RabbitMQ).
 * - `max`: `max(body.attempts, native + offset)`, never lowering a body count; `offset`
 *   is -1 for a 1-based counter (SQS `ApproximateReceiveCount`, Service Bus
 *   `DeliveryCount`), 0 for a 0-based one (Pulsar `RedeliveryCount`, AMQP
 *   `delivery-count`).
 * - `native-else-body`: the native count when present (even when lower), else the
 *   body's: not a max (Kafka's `bq-attempts` header).
 * `native` names the broker's field, for people and the conformance table.
 */
export type AttemptsFormula =
  | { readonly kind: 'body' }
  | { readonly kind: 'max'; readonly native: string; readonly offset: 0 | -1 }
  | { readonly kind: 'native-else-body'; readonly native: string };
