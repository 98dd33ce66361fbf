/** A repeatable event: `next()` resolves at the next `fire()`. */
export class Notifier {
  private waiters: (() => void)[] = [];

  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  fire(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
