import { BabelQueueError, TransportClosedError } from '@babelqueue/core/binding';

/** The broker name this binding's errors carry. */
export const BROKER = 'SQS';

export { TransportClosedError };

/** The named SQS queue does not exist (and `createQueues`, URL `create_queues=1`, is off). */
export class QueueNotFoundError extends BabelQueueError {
  override readonly name = 'QueueNotFoundError';
  constructor(readonly queue: string, options?: { cause?: unknown }) {
    super(`the SQS queue "${queue}" does not exist; create it (with a RedrivePolicy for the work queues) or let the binding create it: createQueues: true, or create_queues=1 in the sqs:// URL (the CLI's --url)`, { ...options, broker: BROKER });
  }
}

/**
 * A message is larger than the queue accepts. Refused before anything is sent;
 * a body is never truncated. The size counts the body and every message
 * attribute (name, type and value), as SQS counts it.
 */
export class MessageTooLargeError extends BabelQueueError {
  override readonly name = 'MessageTooLargeError';
  constructor(readonly queue: string, readonly bytes: number, readonly limit: number) {
    super(`message of ${bytes} bytes (body and attributes) is over the ${limit}-byte maximum of SQS queue "${queue}"; nothing was sent`, { broker: BROKER });
  }
}

/**
 * A delay SQS cannot carry: over 900 s, or any per-message delay on a FIFO
 * queue. Refused before anything is sent.
 */
export class DelayNotSupportedError extends BabelQueueError {
  override readonly name = 'DelayNotSupportedError';
  constructor(message: string) {
    super(message, { broker: BROKER });
  }
}

/** A body that is not valid UTF-8: SQS carries text, and rewriting the bytes would corrupt the envelope. */
export class InvalidBodyError extends BabelQueueError {
  override readonly name = 'InvalidBodyError';
  constructor(message: string) {
    super(message, { broker: BROKER });
  }
}

/** One entry of an SQS batch call failed (SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch). */
export class BatchEntryError extends BabelQueueError {
  override readonly name = 'BatchEntryError';
  constructor(readonly code: string, message: string, readonly senderFault: boolean) {
    super(`${code}: ${message}`, { broker: BROKER });
  }
}

/**
 * `browse` or `remove` was asked to read a queue that is not a dead-letter
 * queue. SQS reads a message only by receiving it, and each receive counts in
 * `ApproximateReceiveCount`, which every BabelQueue consumer reads as
 * attempts (and a RedrivePolicy counts towards `maxReceiveCount`): reading a
 * work queue would cost each message it passes an attempt.
 */
export class WorkQueueBrowseError extends BabelQueueError {
  override readonly name = 'WorkQueueBrowseError';
  constructor(readonly queue: string, readonly operation: 'browse' | 'scan' | 'remove') {
    super(`refusing to ${operation} SQS queue "${queue}": it is not a dead-letter queue (<queue>-dlq, <queue>-dlq.fifo), and SQS reads a message only by receiving it, which counts in ApproximateReceiveCount, so each message read would lose an attempt; to ${operation} it anyway, set browseWorkQueues: true (URL browse_work_queues=1)`, { broker: BROKER });
  }
}
