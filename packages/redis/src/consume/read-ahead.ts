/** The most deliveries one script call reserves: bounds how long Redis spends in one script. */
export const MAX_BATCH = 64;

/**
 * How many deliveries a consume loop keeps reserved beyond its free slots (its
 * read-ahead), from its concurrency and the ready list's length at the last
 * reserve. A deep queue gets up to one more set of slots, so handlers finishing
 * take their next delivery at once while the script call that acks them and
 * refills the read-ahead is on its way; a shallow or empty queue gets none, so
 * several consumers share a short queue instead of one holding it.
 */
export function readAhead(concurrency: number, depth: number): number {
  return Math.max(0, Math.min(concurrency, depth));
}
