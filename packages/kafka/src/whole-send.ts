import { pause } from '@babelqueue/core';
import type { RetryOptions } from 'kafkajs';

/** kafkajs's own retry defaults: 5 retries, 300 ms doubling up to 30 s, ±20 % jitter. */
const DEFAULTS: Required<Omit<RetryOptions, 'restartOnFailure'>> = {
  retries: 5,
  initialRetryTime: 300,
  factor: 0.2,
  multiplier: 2,
  maxRetryTime: 30_000,
};

/**
 * Runs a produce call and, when it fails with an error kafkajs counts as
 * retriable, runs it again whole, on kafkajs's schedule (`retry`, the client's
 * retry settings).
 *
 * Why not kafkajs's own retries: a call that spans several leaders is retried
 * by kafkajs towards the brokers that have not answered only, after choosing
 * the partitions again. A message whose partition moved to a broker that had
 * answered (a leader's death, or connections cut mid-call) is then never
 * written, and the call resolves: 7 of 2,000 acknowledged publishes were lost
 * so in the kafka-ha chaos row. Sent whole, a retry writes the answered part
 * twice instead (at-least-once), and never drops a message. The producer this
 * wraps therefore has kafkajs's retries off ({@link PRODUCER_RETRY}).
 */
export async function sendWhole<T>(send: () => Promise<T>, retry: RetryOptions | undefined, wait: (ms: number) => Promise<unknown> = pause): Promise<T> {
  const policy = { ...DEFAULTS, ...retry };
  let waitMs = policy.initialRetryTime;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await send();
    } catch (error) {
      if (attempt >= policy.retries || !exhaustedRetriable(error)) throw error;
      await wait(Math.round(waitMs * (1 - policy.factor + 2 * policy.factor * Math.random())));
      waitMs = Math.min(waitMs * policy.multiplier, policy.maxRetryTime);
    }
  }
}

/** The producer's kafkajs retry settings: none; {@link sendWhole} retries the whole call. */
export const PRODUCER_RETRY: RetryOptions = { retries: 0 };

/**
 * With no retries of its own, kafkajs rejects a retriable failure as
 * KafkaJSNumberOfRetriesExceeded, and one no retry can cure (a refused
 * record, a denied topic) as KafkaJSNonRetriableError.
 */
function exhaustedRetriable(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'KafkaJSNumberOfRetriesExceeded';
}

/**
 * A produce call the broker answered with an error no retry cures (a record
 * the topic refuses, a batch over its `max.message.bytes`, a denied topic):
 * the broker's KafkaJSProtocolError, which kafkajs rejects as is or wrapped in
 * a KafkaJSNonRetriableError. Not a connection that could not be made, which
 * fails every record alike.
 */
export function refusedByBroker(error: unknown): boolean {
  const { name, retriable, cause } = (error ?? {}) as { name?: unknown; retriable?: unknown; cause?: { name?: unknown } };
  if (name === 'KafkaJSProtocolError') return retriable === false;
  return name === 'KafkaJSNonRetriableError' && cause?.name === 'KafkaJSProtocolError';
}
