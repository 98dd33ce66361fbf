/**
 * Waits `ms` (through a timer, even for 0), or less when any of `signals`
 * aborts: resolves true when the time ran out, false when a signal aborted
 * first (at once when one already has). Never rejects.
 */
export function pause(ms: number, ...signals: AbortSignal[]): Promise<boolean> {
  const signal = signals.length === 1 ? signals[0]! : AbortSignal.any(signals);
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      resolve(false);
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
