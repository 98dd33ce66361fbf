/** One pending row, as a relay reads it back. */
export interface OutboxRecord {
  /** The store's own row id (not `meta.id`). */
  readonly id: string;
  /** The encoded envelope exactly as it was saved. */
  readonly body: Buffer;
  readonly queue: string;
  /** Failed publish attempts so far. */
  readonly attempts: number;
}

/**
 * The outbox table. `save` runs inside the caller's open transaction (`tx`:
 * whatever the store needs to reach it, e.g. the `pg` client that ran BEGIN);
 * the helper never begins or commits anything.
 */
export interface OutboxStore<Tx = never> {
  /** Stores one encoded envelope for `queue`; resolves with the row id. */
  save(body: Buffer, queue: string, tx?: Tx): Promise<string>;
  /** Claims up to `limit` pending rows, oldest first, so that concurrent relays never get the same row. */
  fetchUnpublished(limit: number): Promise<OutboxRecord[]>;
  /** Marks rows published (called only after the broker took them). */
  markPublished(ids: readonly string[]): Promise<void>;
  /** Counts a failed attempt and records why; the row stays pending. */
  markFailed(id: string, error: string): Promise<void>;
}
