/**
 * A counting semaphore: at most `size` holders at once, waiters served in
 * arrival order. One per consume loop caps the records in flight across all
 * of its partitions.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = Math.max(1, Math.floor(size));
  }

  /** Takes a slot if one is free now (no promise, no microtask hop); give it back with {@link release}. */
  tryAcquire(): boolean {
    if (this.free === 0) return false;
    this.free -= 1;
    return true;
  }

  /** Resolves once a slot is held; give it back with {@link release}. */
  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}
