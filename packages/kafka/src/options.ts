import { ConfigurationError } from '@babelqueue/core';
import type { KafkaConnectionOptions } from './connection.js';
import type { ConsumerTuning } from './consume-loop.js';
import type { Ordering } from './partition-batch.js';
import { DEFAULT_CONSUMER_TUNING } from './reinjector.js';
import type { KafkaUrlSettings } from './url.js';

/** Options of {@link KafkaTransport}. */
export interface KafkaTransportOptions extends KafkaConnectionOptions, Partial<ConsumerTuning> {
  /** Consumer group of the work consumers. Default `"babelqueue"` (or the URL's `groupId`). */
  readonly groupId?: string;
  /**
   * Retry tiers in ms, ascending: opt-in (see `DEFAULT_RETRY_TIERS_MS`). With
   * tiers a failing record is republished to `<topic>.retry.<n>` and a delayed
   * publish goes to the smallest tier that covers the delay. Without tiers a
   * failing handler leaves its record uncommitted (redelivered after
   * `redeliveryDelayMs`) and a delay is refused.
   */
  readonly retryTiersMs?: readonly number[];
  /** Run the re-inject consumer beside every consume loop when tiers are set. Default true. */
  readonly reinject?: boolean;
  /** Consumer group of the re-inject consumers. Default `DEFAULT_REINJECT_GROUP_ID` (`babelqueue-retry-reinject`). */
  readonly reinjectGroupId?: string;
  /**
   * Before consuming, create what is missing of: the work topic, its DLQ
   * `<topic>.dlq` (not for a topic that is itself a DLQ), and with tiers the
   * retry topics (LogAppendTime, retention above the largest tier). Existing
   * topics are left alone. Default true.
   * Off, the worker waits for a missing topic instead.
   */
  readonly createTopics?: boolean;
  /** How long a partition pauses before an unsettled record is delivered again (ms). Default 1000. */
  readonly redeliveryDelayMs?: number;
  /**
   * Which records of one partition may be handled at the same time, up to the
   * consume loop's `concurrency` in flight overall:
   * - `'partition'` (default): one at a time per partition, in offset order;
   *   `concurrency` partitions run in parallel.
   * - `'key'`: records with the same key one at a time, in offset order;
   *   different keys (and null keys) in parallel, also within one partition.
   * - `'none'`: any records in parallel (drains, DLQ tools, order-free work).
   * Commits never pass an unsettled record in any mode.
   */
  readonly ordering?: Ordering;
}

const ORDERINGS: readonly Ordering[] = ['partition', 'key', 'none'];

function nonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ConfigurationError(`${name} must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}

/** How long a partition pauses before an unsettled record is delivered again (ms); checked. */
export function resolveRedeliveryDelayMs(options: KafkaTransportOptions): number {
  return nonNegative('redeliveryDelayMs', options.redeliveryDelayMs ?? 1000);
}

/** The `ordering` option, else the URL's, else `'partition'`; checked. */
export function resolveOrdering(options: KafkaTransportOptions, fromUrl: KafkaUrlSettings | undefined): Ordering {
  const ordering = options.ordering ?? fromUrl?.ordering ?? 'partition';
  if (!ORDERINGS.includes(ordering)) {
    throw new ConfigurationError(`ordering must be ${ORDERINGS.join(', ')}, got ${String(ordering)}`);
  }
  return ordering;
}

/** The consumer tuning, defaults filled in; checked. */
export function resolveTuning(options: KafkaTransportOptions): ConsumerTuning {
  return {
    maxWaitTimeMs: nonNegative('maxWaitTimeMs', options.maxWaitTimeMs ?? DEFAULT_CONSUMER_TUNING.maxWaitTimeMs),
    commitIntervalMs: nonNegative('commitIntervalMs', options.commitIntervalMs ?? DEFAULT_CONSUMER_TUNING.commitIntervalMs),
    sessionTimeoutMs: nonNegative('sessionTimeoutMs', options.sessionTimeoutMs ?? DEFAULT_CONSUMER_TUNING.sessionTimeoutMs),
  };
}
