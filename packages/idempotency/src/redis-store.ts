import type { IdempotencyStore } from '@babelqueue/core';

/** The Redis commands the store sends; an ioredis `Redis` or `Cluster` fits. */
export interface RedisCommandClient {
  set(key: string, value: string, nx: 'NX'): Promise<unknown>;
  set(key: string, value: string, px: 'PX', milliseconds: number, nx: 'NX'): Promise<unknown>;
  exists(key: string): Promise<number>;
  del(key: string): Promise<number>;
}

/** Options of {@link RedisIdempotencyStore}. */
export interface RedisIdempotencyStoreOptions {
  /** Key prefix before the message id. Default `bq:idemp:` (shared with the other SDKs' stores). */
  readonly prefix?: string;
  /** Forget an id after this many ms (`PX`). Default none: remembered until `forget`. */
  readonly ttlMs?: number;
}

/**
 * A seen-set in Redis, shared by every worker (and by the other SDKs' stores):
 * key `bq:idemp:<meta.id>`, claimed with `SET … NX PX <ttl>`. Errors (Redis
 * down) reject, so `idempotent()` fails the message into the retry path instead
 * of skipping it.
 *
 * @example
 * ```ts
 * const store = new RedisIdempotencyStore(new Redis(url), { ttlMs: 7 * 24 * 3600_000 });
 * app.handle('urn:babel:orders:created', idempotent(chargeCard, store));
 * ```
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly prefix: string;
  private readonly ttlMs: number | undefined;

  constructor(private readonly client: RedisCommandClient, options: RedisIdempotencyStoreOptions = {}) {
    this.prefix = options.prefix ?? 'bq:idemp:';
    if (options.ttlMs !== undefined && !(Number.isInteger(options.ttlMs) && options.ttlMs > 0)) {
      throw new RangeError(`ttlMs must be a positive integer of milliseconds, got ${String(options.ttlMs)}`);
    }
    this.ttlMs = options.ttlMs;
  }

  /** The Redis key of a message id. */
  key(id: string): string {
    return this.prefix + id;
  }

  async seen(id: string): Promise<boolean> {
    return (await this.client.exists(this.key(id))) === 1;
  }

  async remember(id: string): Promise<void> {
    if (this.ttlMs === undefined) await this.client.set(this.key(id), '1', 'NX');
    else await this.client.set(this.key(id), '1', 'PX', this.ttlMs, 'NX');
  }

  async forget(id: string): Promise<void> {
    await this.client.del(this.key(id));
  }
}
