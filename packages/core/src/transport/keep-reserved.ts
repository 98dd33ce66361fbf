/** Options of {@link keepReserved}. */
export interface KeepReservedOptions {
  /** How long one reservation lasts, in ms; it is renewed every third of that. */
  readonly reservationMs: number;
  /**
   * Pushes the reservation's deadline out by another `reservationMs`. Resolve
   * false when the reservation is gone (it expired and another consumer may
   * have the message): renewing stops and `onLost` is told.
   */
  readonly renew: () => Promise<boolean>;
  /** The reservation is gone or a renewal failed; says why (for a log line). */
  readonly onTrouble: (why: string, lost: boolean) => void;
}

/**
 * Keeps one delivery reserved while its handler runs, so a slow handler that
 * is still alive is never handed to a second consumer (Redis `retry_after`,
 * SQS visibility, a Service Bus lock). Returns the function that stops it,
 * called when the delivery is settled. A failed renewal is reported and tried
 * again at the next tick; the timer never keeps the process alive.
 */
export function keepReserved(options: KeepReservedOptions): () => void {
  const everyMs = Math.max(50, Math.floor(options.reservationMs / 3));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    options.renew().then(
      (held) => {
        if (stopped) return;
        if (!held) {
          stopped = true;
          options.onTrouble('the reservation expired before it could be renewed; another consumer may get the message', true);
          return;
        }
        schedule();
      },
      (error: unknown) => {
        if (stopped) return;
        options.onTrouble(`renewing the reservation failed: ${error instanceof Error ? error.message : String(error)}`, false);
        schedule();
      },
    );
  };
  const schedule = () => {
    timer = setTimeout(tick, everyMs);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
