/**
 * Deliveries left unsettled wait here for a while before they are handed back
 * to the broker: handing back at once would return a message whose DLQ write
 * just failed straight away, and the worker would spin on it as fast as the
 * broker can redeliver. Used by the bindings that requeue or release
 * explicitly (RabbitMQ, Artemis).
 */
export class Holds {
  private readonly pending = new Map<NodeJS.Timeout, () => void>();

  constructor(private readonly delayMs: number) {}

  /** Runs `release` after the hold delay (or at {@link flush}). */
  add(release: () => void): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      release();
    }, this.delayMs);
    this.pending.set(timer, release);
  }

  /** Releases every held delivery now (the consume loop is stopping or its channel or link is gone). */
  flush(): void {
    for (const [timer, release] of this.pending) {
      clearTimeout(timer);
      release();
    }
    this.pending.clear();
  }
}
