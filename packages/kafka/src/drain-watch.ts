import type { ConsumeOptions } from '@babelqueue/core';

/** Tracks the drain limits of one consume call: `maxMessages` handed over, or `idleMs` without activity. */
export class DrainWatch {
  private taken = 0;
  private inFlight = 0;
  private lastActivity = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ConsumeOptions, private readonly done: () => void) {}

  /** The idle clock starts once the consumer has joined its group (joining can take seconds). */
  joined(): void {
    const { idleMs } = this.options;
    if (idleMs === undefined || this.timer !== undefined) return;
    this.lastActivity = Date.now();
    this.timer = setInterval(() => {
      if (this.inFlight === 0 && Date.now() - this.lastActivity >= idleMs) this.done();
    }, Math.max(10, Math.min(100, idleMs / 4)));
  }

  mayTake(): boolean {
    const { maxMessages } = this.options;
    return maxMessages === undefined || this.taken < maxMessages;
  }

  /** The idle clock needs no reading here: it only runs with nothing in flight, and `finished` restarts it. */
  started(): void {
    this.taken += 1;
    this.inFlight += 1;
  }

  finished(): void {
    this.inFlight -= 1;
    this.lastActivity = Date.now();
    if (!this.mayTake() && this.inFlight === 0) this.done();
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }
}
