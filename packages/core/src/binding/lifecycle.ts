import { TransportClosedError } from '../transport/errors.js';

/**
 * The shell every transport has around its broker calls: it refuses work once
 * closing began, tracks the consume loops running, and closes once, for good.
 * `close(release)` aborts {@link signal} (the loops stop taking work), waits for
 * every tracked run to end (in-flight deliveries settle first), then runs
 * `release` (the connection, the client); a second call returns the same
 * promise. Afterwards {@link assertOpen} throws `TransportClosedError`.
 */
export class TransportLifecycle {
  private readonly stop = new AbortController();
  private readonly runs = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;

  constructor(private readonly broker: string) {}

  /** Aborted once `close()` begins: what the consume loops stop on. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** `close()` was called (it may still be waiting for the runs). */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Throws `TransportClosedError` once `close()` was called. */
  assertOpen(): void {
    if (this.closing !== undefined) throw new TransportClosedError(this.broker);
  }

  /** Resolves or rejects as `run` does; `close()` waits for it meanwhile. */
  async track<T>(run: Promise<T>): Promise<T> {
    this.runs.add(run);
    try {
      return await run;
    } finally {
      this.runs.delete(run);
    }
  }

  /** Aborts {@link signal}, waits for every tracked run, then `release`s; once. */
  close(release: () => Promise<void> | void): Promise<void> {
    this.closing ??= (async () => {
      this.stop.abort();
      await Promise.allSettled(this.runs);
      await release();
    })();
    return this.closing;
  }
}
