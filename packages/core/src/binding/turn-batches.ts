/** One item waiting in a {@link TurnBatches} batch, with the promise its caller holds. */
export interface Waiting<T> {
  readonly item: T;
  resolve(): void;
  reject(error: unknown): void;
}

/** What a batch may hold and when it leaves. */
export interface TurnBatchLimits<T> {
  /** Items per batch (the broker's batch-call limit); a batch this full leaves at once. */
  readonly maxItems?: number;
  /** Bytes per batch, as `bytesOf` counts them: an item that would pass it starts a new batch. */
  readonly maxBytes?: number;
  readonly bytesOf?: (item: T) => number;
  /**
   * When a batch that is not full leaves. `nextTick` (the default): once the
   * run of callbacks that made it is over (an I/O event and the promise
   * continuations it set off), without an extra turn of the event loop.
   * `setImmediate`: after every I/O event of this turn, for work that
   * finishes in separate events (SQS settlements of handlers that did I/O).
   */
  readonly leaves?: 'nextTick' | 'setImmediate';
}

/**
 * Gathers the calls a binding makes in one run of callbacks into batches per
 * key (a topic, a queue URL), so that many publishes or settlements become
 * one broker call: a window of concurrent publishes otherwise costs a request
 * each, and the request was most of a publisher's CPU. `add` returns the
 * promise its caller awaits; `send` gets each batch, in the order added, and
 * settles every item of it (each with its own answer where the broker gives
 * one). A lone item is a batch of one: the binding sends it as it did alone.
 */
export class TurnBatches<T> {
  private readonly open = new Map<string, { waiting: Waiting<T>[]; bytes: number }>();
  private scheduled = false;

  constructor(
    private readonly limits: TurnBatchLimits<T>,
    private readonly send: (key: string, batch: Waiting<T>[]) => void,
  ) {}

  add(key: string, item: T): Promise<void> {
    const bytes = this.limits.bytesOf?.(item) ?? 0;
    let batch = this.open.get(key);
    if (batch !== undefined && this.limits.maxBytes !== undefined && batch.bytes + bytes > this.limits.maxBytes) {
      this.leave(key, batch.waiting);
      batch = undefined;
    }
    if (batch === undefined) {
      batch = { waiting: [], bytes: 0 };
      this.open.set(key, batch);
    }
    batch.bytes += bytes;
    const { waiting } = batch;
    const promise = new Promise<void>((resolve, reject) => waiting.push({ item, resolve, reject }));
    if (waiting.length === this.limits.maxItems) {
      this.leave(key, waiting);
    } else if (!this.scheduled) {
      this.scheduled = true;
      if (this.limits.leaves === 'setImmediate') setImmediate(() => this.flush());
      else process.nextTick(() => this.flush());
    }
    return promise;
  }

  /** Sends every open batch now (a close sends them on the connection it is closing). */
  flush(): void {
    this.scheduled = false;
    for (const [key, { waiting }] of [...this.open]) this.leave(key, waiting);
  }

  private leave(key: string, waiting: Waiting<T>[]): void {
    this.open.delete(key);
    this.send(key, waiting);
  }
}
