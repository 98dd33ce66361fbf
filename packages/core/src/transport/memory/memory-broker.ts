import type { HeaderValue } from '../transport.js';

/** One stored message of the in-memory broker. */
export interface StoredMessage {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly key: Buffer | null;
  /** Deliveries so far that ended without an ack (0-based redelivery count of the next delivery). */
  redeliveries: number;
}

interface Lease {
  readonly message: StoredMessage;
  expiresAt: number;
}

/** A FIFO with O(1) shift: `Array#shift` copies the whole array on large queues. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head] as T;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  toArray(): T[] {
    return this.items.slice(this.head);
  }

  /** Items `start` (from the head) up to `end`, exclusive. */
  slice(start: number, end: number): T[] {
    return this.items.slice(this.head + start, this.head + end);
  }

  /** Removes the first item `match` accepts; false when none does. */
  removeFirst(match: (item: T) => boolean): boolean {
    for (let i = this.head; i < this.items.length; i++) {
      if (match(this.items[i] as T)) {
        this.items.splice(i, 1);
        return true;
      }
    }
    return false;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

interface QueueState {
  ready: Fifo<StoredMessage>;
  delayed: { dueAt: number; message: StoredMessage }[];
  leases: Map<number, Lease>;
}

/**
 * The storage behind {@link InMemoryTransport}: named FIFO queues with
 * delayed messages, leases that expire back to the queue (visibility
 * timeout), and a redelivery counter per message. Deterministic and
 * synchronous, so users' tests can inspect it at any point.
 */
export class MemoryBroker {
  private readonly queues = new Map<string, QueueState>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private nextLease = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /** Adds a message to a queue, now or after `delayMs`. */
  push(queue: string, message: StoredMessage, delayMs = 0): void {
    const state = this.state(queue);
    if (delayMs > 0) {
      state.delayed.push({ dueAt: this.now() + delayMs, message });
      state.delayed.sort((a, b) => a.dueAt - b.dueAt);
    } else {
      state.ready.push(message);
    }
    this.wake(queue);
  }

  /** Leases up to `max` ready messages for `visibilityMs`. */
  take(queue: string, max: number, visibilityMs: number): { leaseId: number; message: StoredMessage }[] {
    const state = this.state(queue);
    this.promote(state);
    const out: { leaseId: number; message: StoredMessage }[] = [];
    while (out.length < max && state.ready.length > 0) {
      const message = state.ready.shift() as StoredMessage;
      const leaseId = this.nextLease++;
      state.leases.set(leaseId, { message, expiresAt: this.now() + visibilityMs });
      out.push({ leaseId, message });
    }
    return out;
  }

  /** Removes a leased message. False when the lease had already expired. */
  ack(queue: string, leaseId: number): boolean {
    return this.state(queue).leases.delete(leaseId);
  }

  /** Pushes a lease's expiry to `visibilityMs` from now. False when the lease had already expired. */
  extend(queue: string, leaseId: number, visibilityMs: number): boolean {
    const state = this.state(queue);
    this.promote(state);
    const lease = state.leases.get(leaseId);
    if (lease === undefined) return false;
    lease.expiresAt = this.now() + visibilityMs;
    return true;
  }

  /** Puts a leased message back (counted as a redelivery), after `delayMs`. */
  release(queue: string, leaseId: number, delayMs = 0): boolean {
    const state = this.state(queue);
    const lease = state.leases.get(leaseId);
    if (lease === undefined) return false;
    state.leases.delete(leaseId);
    lease.message.redeliveries += 1;
    this.push(queue, lease.message, delayMs);
    return true;
  }

  /** Ready messages of a queue, oldest first (delayed and leased ones excluded). */
  ready(queue: string): readonly StoredMessage[] {
    const state = this.state(queue);
    this.promote(state);
    return state.ready.toArray();
  }

  /** Ready messages `offset` to `offset + limit` (exclusive) from the head, oldest first. */
  readySlice(queue: string, offset: number, limit: number): readonly StoredMessage[] {
    const state = this.state(queue);
    this.promote(state);
    return state.ready.slice(offset, offset + limit);
  }

  /** Removes the first ready message whose body is `body` byte for byte; false when none is. */
  removeReady(queue: string, body: Buffer): boolean {
    const state = this.state(queue);
    this.promote(state);
    return state.ready.removeFirst((message) => message.body.equals(body));
  }

  /** Counts of a queue's messages by state. */
  stats(queue: string): { ready: number; delayed: number; inFlight: number } {
    const state = this.state(queue);
    this.promote(state);
    return { ready: state.ready.length, delayed: state.delayed.length, inFlight: state.leases.size };
  }

  /** Removes every ready and delayed message of a queue; returns how many. */
  purge(queue: string): number {
    const state = this.state(queue);
    const count = state.ready.length + state.delayed.length;
    state.ready.clear();
    state.delayed = [];
    return count;
  }

  /** Names of the queues that exist. */
  queueNames(): string[] {
    return [...this.queues.keys()];
  }

  /** Resolves when a message may be ready on `queue`, or after `waitMs`. */
  async waitFor(queue: string, waitMs: number, signal: AbortSignal): Promise<void> {
    if (waitMs <= 0 || signal.aborted) return;
    const state = this.state(queue);
    const nextDue = Math.min(this.nextLeaseExpiry(state), state.delayed[0]?.dueAt ?? Infinity);
    const wait = Math.max(0, Math.min(waitMs, nextDue - this.now()));
    await new Promise<void>((resolve) => {
      const set = this.waiters.get(queue) ?? new Set();
      this.waiters.set(queue, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      set.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private state(queue: string): QueueState {
    let state = this.queues.get(queue);
    if (state === undefined) {
      state = { ready: new Fifo(), delayed: [], leases: new Map() };
      this.queues.set(queue, state);
    }
    return state;
  }

  /** Moves due delayed messages and expired leases back to the ready list. */
  private promote(state: QueueState): void {
    const now = this.now();
    while (state.delayed.length > 0 && (state.delayed[0] as { dueAt: number }).dueAt <= now) {
      state.ready.push((state.delayed.shift() as { message: StoredMessage }).message);
    }
    for (const [id, lease] of state.leases) {
      if (lease.expiresAt <= now) {
        state.leases.delete(id);
        lease.message.redeliveries += 1;
        state.ready.push(lease.message);
      }
    }
  }

  private nextLeaseExpiry(state: QueueState): number {
    let next = Infinity;
    for (const lease of state.leases.values()) next = Math.min(next, lease.expiresAt);
    return next;
  }

  private wake(queue: string): void {
    const set = this.waiters.get(queue);
    if (set === undefined) return;
    for (const done of [...set]) done();
  }
}
