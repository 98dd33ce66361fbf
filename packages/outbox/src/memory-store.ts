import type { OutboxRecord, OutboxStore } from './store.js';

interface Row {
  body: Buffer;
  queue: string;
  attempts: number;
  lastError?: string;
  published: boolean;
}

/** An in-process outbox for tests and demos. It has no transaction: `save` just appends. */
export class MemoryOutboxStore implements OutboxStore {
  private readonly rows = new Map<string, Row>();
  private next = 1;

  async save(body: Buffer, queue: string): Promise<string> {
    const id = String(this.next++);
    this.rows.set(id, { body: Buffer.from(body), queue, attempts: 0, published: false });
    return id;
  }

  async fetchUnpublished(limit: number): Promise<OutboxRecord[]> {
    return [...this.rows.entries()]
      .filter(([, row]) => !row.published)
      .slice(0, limit)
      .map(([id, row]) => ({ id, body: row.body, queue: row.queue, attempts: row.attempts }));
  }

  async markPublished(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row) row.published = true;
    }
  }

  async markFailed(id: string, error: string): Promise<void> {
    const row = this.rows.get(id);
    if (row) {
      row.attempts += 1;
      row.lastError = error;
    }
  }

  /** Rows not published yet. */
  pending(): number {
    return [...this.rows.values()].filter((row) => !row.published).length;
  }
}
