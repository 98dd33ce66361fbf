import type { IdempotencyStore } from '@babelqueue/core';

/** What the store needs of a PostgreSQL client; a `pg` `Pool` or `Client` fits. */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** Options of {@link PostgresIdempotencyStore}. */
export interface PostgresIdempotencyStoreOptions {
  /** Table name (optionally schema-qualified). Default `babelqueue_idempotency`. */
  readonly table?: string;
  /** Forget an id after this many ms (`expires_at`). Default none. */
  readonly ttlMs?: number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * A seen-set in PostgreSQL: table `babelqueue_idempotency(message_id PRIMARY
 * KEY, created_at, expires_at NULL)`, claimed with an insert-on-conflict. An
 * expired row counts as unseen and is claimed again. Errors (database down)
 * reject, so `idempotent()` fails the message into the retry path.
 *
 * @example
 * ```ts
 * const store = new PostgresIdempotencyStore(new pg.Pool({ connectionString }));
 * await store.createTable();
 * app.handle('urn:babel:orders:created', idempotent(chargeCard, store));
 * ```
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly table: string;
  private readonly ttlMs: number | null;

  constructor(private readonly client: SqlClient, options: PostgresIdempotencyStoreOptions = {}) {
    this.table = options.table ?? 'babelqueue_idempotency';
    if (!IDENTIFIER.test(this.table)) throw new RangeError(`table must be a plain SQL identifier (optionally schema.table), got ${JSON.stringify(this.table)}`);
    if (options.ttlMs !== undefined && !(Number.isInteger(options.ttlMs) && options.ttlMs > 0)) {
      throw new RangeError(`ttlMs must be a positive integer of milliseconds, got ${String(options.ttlMs)}`);
    }
    this.ttlMs = options.ttlMs ?? null;
  }

  /** Creates the table when it is missing (the DDL every SDK's store shares). */
  async createTable(): Promise<void> {
    await this.client.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (
         message_id TEXT PRIMARY KEY,
         created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
         expires_at TIMESTAMPTZ NULL
       )`,
    );
  }

  async seen(id: string): Promise<boolean> {
    const result = await this.client.query(
      `SELECT 1 FROM ${this.table} WHERE message_id = $1 AND (expires_at IS NULL OR expires_at > now())`,
      [id],
    );
    return result.rows.length > 0;
  }

  async remember(id: string): Promise<void> {
    await this.client.query(
      `INSERT INTO ${this.table} AS t (message_id, created_at, expires_at)
       VALUES ($1, now(), CASE WHEN $2::bigint IS NULL THEN NULL ELSE now() + $2::bigint * interval '1 millisecond' END)
       ON CONFLICT (message_id) DO UPDATE SET created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE t.expires_at IS NOT NULL AND t.expires_at <= now()`,
      [id, this.ttlMs],
    );
  }

  async forget(id: string): Promise<void> {
    await this.client.query(`DELETE FROM ${this.table} WHERE message_id = $1`, [id]);
  }

  /** Deletes expired rows; resolves with how many. Run it now and then when a TTL is set. */
  async purgeExpired(): Promise<number> {
    const result = await this.client.query(`DELETE FROM ${this.table} WHERE expires_at IS NOT NULL AND expires_at <= now()`);
    return result.rowCount ?? 0;
  }
}
