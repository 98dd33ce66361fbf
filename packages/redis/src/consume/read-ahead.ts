/** The most deliveries one script call reserves: bounds how long Redis spends in one script. */
export const MAX_BATCH = 64;

/**
 * How many deliveries a consume loop may hold reserved beyond its free slots
 * (its read-ahead): three more sets of slots, at most two full calls' worth
 * beyond one set. The reserve scripts take only half of what the ready list
 * holds beyond the slots they serve, so a deep queue fills the read-ahead and
 * a short one is left for other consumers. With it, handlers finishing take
 * their next delivery at once while the calls that ack them and refill the
 * read-ahead are on their way.
 */
export function readAhead(concurrency: number): number {
  return Math.max(concurrency, Math.min(3 * concurrency, 2 * MAX_BATCH));
}

/**
 * How many queued acks send a script call at once, without waiting for the
 * event loop's next turn: two sets of slots, so each call carries (and
 * reserves) twice as many as one set, halving the calls per message. With a
 * read-ahead of three sets, a deep queue still keeps about two calls in
 * flight, so Redis runs one while the handlers work through what the other
 * brought.
 */
export function ackBatch(concurrency: number): number {
  return 2 * concurrency;
}
