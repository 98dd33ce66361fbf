/**
 * The stop of a push consume loop, asked for once and seen three ways: a flag
 * the loop checks ({@link stopping}), a promise it races its waits against
 * ({@link stopped}), and a signal that ends a back-off pause at once
 * ({@link signal}). {@link follow} makes the caller's signal and the
 * transport's close stop it too.
 */
export class LoopStop {
  /** Resolves with `'stop'` once a stop was asked for. */
  readonly stopped: Promise<'stop'>;
  private readonly controller = new AbortController();
  private resolve!: (why: 'stop') => void;

  constructor() {
    this.stopped = new Promise((resolve) => (this.resolve = resolve));
  }

  /** A stop was asked for. */
  get stopping(): boolean {
    return this.controller.signal.aborted;
  }

  /** Aborted with the stop: pass it to `pause`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Asks for the stop; later calls do nothing. */
  request(): void {
    if (this.stopping) return;
    this.controller.abort();
    this.resolve('stop');
  }

  /** Stops when any of `signals` aborts (at once if one already has); the returned function stops following. */
  follow(...signals: AbortSignal[]): () => void {
    const onAbort = () => this.request();
    for (const signal of signals) {
      if (signal.aborted) this.request();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    return () => {
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
    };
  }
}
