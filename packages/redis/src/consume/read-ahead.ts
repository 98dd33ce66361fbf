/** The most deliveries one script call reserves: bounds how long Redis spends in one script. */
export const MAX_BATCH = 64;

/**
 * How many deliveries a consume loop may hold reserved beyond its free slots
 * (its read-ahead): one more set of slots. The reserve scripts take only half
 * of what the ready list holds beyond the slots they serve, so a deep queue
 * fills the read-ahead and a short one is left for other consumers. With it,
 * handlers finishing take their next delivery at once while the script call
 * that acks them and refills the read-ahead is on its way.
 */
export function readAhead(concurrency: number): number {
  return concurrency;
}

/**
 * How many queued acks send a script call at once, without waiting for the
 * event loop's next turn: one set of slots. With a read-ahead of one set too,
 * a deep queue keeps about two calls in flight, so Redis runs one while the
 * handlers work through what the other brought.
 */
export function ackBatch(concurrency: number): number {
  return concurrency;
}
