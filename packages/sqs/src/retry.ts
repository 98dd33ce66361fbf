/** The pause before the n-th consecutive retry of a failed call: 100 ms doubling, at most 5 s. */
export function retryPauseMs(failures: number): number {
  return Math.min(5000, 100 * 2 ** Math.min(failures - 1, 6));
}

/** Resolves after `ms`, or at once when any of `signals` aborts. */
export function pause(ms: number, ...signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const any = AbortSignal.any(signals);
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      any.removeEventListener('abort', done);
      resolve();
    }
    if (any.aborted) done();
    else any.addEventListener('abort', done, { once: true });
  });
}
