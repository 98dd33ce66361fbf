/** Options of {@link dlqName} and {@link sqsDlqName}. */
export interface DlqNameOptions {
  /** An explicit dead-letter queue: used as is when not blank. */
  queue?: string | null;
  /** Suffix appended to the queue name (`.dlq`; SQS `-dlq`). */
  suffix?: string | null;
}

/** The default DLQ suffix on every broker but SQS. */
export const DLQ_SUFFIX = '.dlq';
/** The default DLQ suffix on SQS (queue names cannot contain a dot there). */
export const SQS_DLQ_SUFFIX = '-dlq';

/** The dead-letter queue of `queue`: the explicit queue, else `<queue>` + suffix (`orders.dlq`). */
export function dlqName(queue: string, options: DlqNameOptions = {}): string {
  const explicit = options.queue;
  if (typeof explicit === 'string' && explicit.trim() !== '') return explicit;
  return queue + (options.suffix ?? DLQ_SUFFIX);
}

/**
 * The SQS dead-letter queue of `queue`: the explicit queue, else `<queue>-dlq`
 * with a FIFO queue's `.fifo` kept last (`orders.fifo` → `orders-dlq.fifo`).
 */
export function sqsDlqName(queue: string, options: DlqNameOptions = {}): string {
  const explicit = options.queue;
  if (typeof explicit === 'string' && explicit.trim() !== '') return explicit;
  const suffix = options.suffix ?? SQS_DLQ_SUFFIX;
  return queue.endsWith('.fifo') ? `${queue.slice(0, -'.fifo'.length)}${suffix}.fifo` : queue + suffix;
}
