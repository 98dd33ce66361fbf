import type { OutboxRecord, OutboxStore } from './store.js';

/** What the store needs of a PostgreSQL client; a `pg` `Pool`, `PoolClient` or `Client` fits. */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Options of {@link PostgresOutboxStore}. */
export interface PostgresOutboxStoreOptions {
  /** Table name (optionally schema-qualified). Default `babelqueue_outbox`. */
  readonly table?: string;
  /**
   * How long a claimed row belongs to the relay that claimed it, in ms. A relay
   * that dies leaves its rows to the next relay once this passes. Default 60,000.
   */
  readonly claimMs?: number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * The outbox in PostgreSQL. `save` runs on the client you pass (the one inside
 * your transaction); the relay side uses the pool given here. Claims are
 * `FOR UPDATE SKIP LOCKED` plus a claim deadline, so relays running at once
 * never take the same row and a crashed relay's rows come back after `claimMs`.
 * Bodies are stored as `bytea`: the relay sends exactly the saved bytes.
 */
export class PostgresOutboxStore implements OutboxStore<SqlClient> {
  readonly table: string;
  private readonly claimMs: number;

  constructor(private readonly pool: SqlClient, options: PostgresOutboxStoreOptions = {}) {
    this.table = options.table ?? 'babelqueue_outbox';
    if (!IDENTIFIER.test(this.table)) throw new RangeError(`table must be a plain SQL identifier (optionally schema.table), got ${JSON.stringify(this.table)}`);
    this.claimMs = options.claimMs ?? 60_000;
    if (!(Number.isInteger(this.claimMs) && this.claimMs > 0)) throw new RangeError(`claimMs must be a positive integer, got ${String(options.claimMs)}`);
  }

  /** Creates the table and its pending-rows index when missing. */
  async createTable(): Promise<void> {
    const index = `${this.table.replace('.', '_')}_pending`;
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (
         id BIGSERIAL PRIMARY KEY,
         queue TEXT NOT NULL,
         body BYTEA NOT NULL,
         attempts INTEGER NOT NULL DEFAULT 0,
         last_error TEXT NULL,
         created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
         claimed_until TIMESTAMPTZ NULL,
         published_at TIMESTAMPTZ NULL
       )`,
    );
    await this.pool.query(`CREATE INDEX IF NOT EXISTS ${index.split('.').pop()} ON ${this.table} (id) WHERE published_at IS NULL`);
  }

  /** Inserts the row on `tx` (your transaction's client); without one, on the pool (no atomicity with your write). */
  async save(body: Buffer, queue: string, tx?: SqlClient): Promise<string> {
    const { rows } = await (tx ?? this.pool).query(`INSERT INTO ${this.table} (queue, body) VALUES ($1, $2) RETURNING id`, [queue, body]);
    return String(rows[0].id);
  }

  async fetchUnpublished(limit: number): Promise<OutboxRecord[]> {
    const { rows } = await this.pool.query(
      `UPDATE ${this.table} SET claimed_until = now() + $2::bigint * interval '1 millisecond'
       WHERE id IN (
         SELECT id FROM ${this.table}
         WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until <= now())
         ORDER BY id LIMIT $1
         FOR UPDATE SKIP LOCKED)
       RETURNING id, queue, body, attempts`,
      [limit, this.claimMs],
    );
    return rows
      .map((row) => ({ id: String(row.id), queue: row.queue as string, body: row.body as Buffer, attempts: Number(row.attempts) }))
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  }

  /** Marks rows published; a row already published stays as it was (never marked twice). */
  async markPublished(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      `UPDATE ${this.table} SET published_at = now(), claimed_until = NULL WHERE id = ANY($1::bigint[]) AND published_at IS NULL`,
      [ids],
    );
  }

  /** Counts the failure and releases the claim, so the next pass retries the row. */
  async markFailed(id: string, error: string): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.table} SET attempts = attempts + 1, last_error = $2, claimed_until = NULL WHERE id = $1::bigint AND published_at IS NULL`,
      [id, error.slice(0, 1000)],
    );
  }

  /** Rows not published yet. */
  async pending(): Promise<number> {
    const { rows } = await this.pool.query(`SELECT count(*)::int AS n FROM ${this.table} WHERE published_at IS NULL`);
    return rows[0].n as number;
  }
}
