import { type TransportCapabilities } from '@babelqueue/core';
import { sqsDlqName, type BindingRules } from '@babelqueue/core/binding';

/**
 * Amazon SQS's settlement rules (seed 000, "Amazon SQS"): with dead-lettering
 * off, poison and a version-gated message are left to SQS itself (not deleted,
 * reported; visibility expiry redelivers them and the queue's RedrivePolicy
 * moves them to its native dead-letter queue). `on_unknown_urn: delete` drops
 * them. The BabelQueue DLQ is `<queue>-dlq` (`<queue>-dlq.fifo` for FIFO).
 */
export const SQS_RULES: BindingRules = {
  name: 'sqs',
  poisonWithoutDeadLetter: 'native',
  deleteStrategyDropsPoison: true,
  versionGateWithoutDeadLetter: 'native',
  attempts: { kind: 'max', native: 'ApproximateReceiveCount', offset: -1 },
  dlqName: (queue, suffix) => sqsDlqName(queue, suffix === undefined ? {} : { suffix }),
};

/**
 * Delays ride `DelaySeconds` (standard queues, up to 900 s); a retry is a
 * release with `ChangeMessageVisibility(backoff)`; riders ride String
 * MessageAttributes. SQS reads only by receiving: its scan is leased.
 */
export const SQS_CAPABILITIES: TransportCapabilities = {
  delayedPublish: true,
  delayedRetry: true,
  retry: true,
  headers: true,
  scan: 'leased',
};
