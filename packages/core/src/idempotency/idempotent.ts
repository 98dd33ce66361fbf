/**
 * The seen-set an idempotent handler consults (ADR-0022). Methods may be
 * synchronous or return promises, so a Redis or SQL store fits as well as a Set.
 */
export interface IdempotencyStore {
  /** True when `id` was remembered after a successful run. */
  seen(id: string): boolean | Promise<boolean>;
  /** Marks `id` as handled. */
  remember(id: string): void | Promise<void>;
  /** Evicts `id` (manual replay, TTL expiry), so its next delivery runs again. */
  forget(id: string): void | Promise<void>;
}

/** What the wrapper reads from a message: `meta.id`, the per-message identity. */
export interface IdentifiedMessage {
  readonly id: string;
}

/**
 * Wraps a handler so at-least-once delivery collapses to one effect per
 * `meta.id` (never `trace_id`): a remembered id skips the handler (and the
 * delivery is acknowledged); a handler that throws leaves the id unmarked, so
 * the normal retry / dead-letter path applies; a successful run remembers it.
 * A blank or missing id cannot be deduplicated: the handler runs every time.
 * This is post-success dedupe, not an in-flight lock.
 *
 * @example
 * ```ts
 * app.handle('urn:babel:orders:created', idempotent(chargeCard, new MemoryIdempotencyStore()));
 * ```
 */
export function idempotent<D, M extends IdentifiedMessage, R>(
  handler: (data: D, message: M) => R | Promise<R>,
  store: IdempotencyStore,
): (data: D, message: M) => Promise<R | undefined> {
  return async (data, message) => {
    const id = typeof message.id === 'string' ? message.id : '';
    if (id === '') return handler(data, message);
    if (await store.seen(id)) return undefined;
    const result = await handler(data, message);
    await store.remember(id);
    return result;
  };
}

/** An in-process seen-set: for tests, single-process workers and as a reference. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly ids = new Set<string>();

  seen(id: string): boolean {
    return this.ids.has(id);
  }

  remember(id: string): void {
    this.ids.add(id);
  }

  forget(id: string): void {
    this.ids.delete(id);
  }
}
