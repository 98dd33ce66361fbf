import { EnvelopeCodec, type Envelope } from '@babelqueue/core';
import type { OutboxStore } from './store.js';

/**
 * The write side: stores an envelope in the same database transaction as the
 * business write, so both commit or neither does. A relay publishes it later.
 *
 * @example
 * ```ts
 * const outbox = new Outbox(new PostgresOutboxStore(pool));
 * const client = await pool.connect();
 * await client.query('BEGIN');
 * await client.query('INSERT INTO orders (id) VALUES ($1)', [1042]);
 * await outbox.write(EnvelopeCodec.make('urn:babel:orders:created', { order_id: 1042 }, { queue: 'orders' }), client);
 * await client.query('COMMIT');
 * client.release();
 * ```
 */
export class Outbox<Tx = never> {
  constructor(private readonly store: OutboxStore<Tx>) {}

  /**
   * Encodes `envelope` (the canonical bytes the relay will send verbatim) and
   * saves it for `meta.queue` (or `"default"`) through `tx`, the caller's open
   * transaction. Resolves with the outbox row id.
   */
  write(envelope: Envelope, tx?: Tx): Promise<string> {
    const queue = typeof envelope.meta?.queue === 'string' && envelope.meta.queue !== '' ? envelope.meta.queue : 'default';
    return this.store.save(Buffer.from(EnvelopeCodec.encode(envelope), 'utf8'), queue, tx);
  }
}
