import type { ConsumeOptions } from '../transport/transport.js';

/**
 * The drain limits of one `consume` call in a push loop (RabbitMQ, Pulsar,
 * Artemis): stop after `maxMessages` deliveries were handed over, or after
 * `idleMs` without a delivery and with nothing in flight. The loop keeps its
 * own slots and stop; this keeps the count, the last activity and the idle timer.
 * The idle clock runs only while the loop consumes ({@link startIdleClock}
 * once the consumer is registered, {@link disarm} when its connection is
 * lost): time spent connecting never counts against `idleMs`.
 */
export class DrainLimits {
  /** Deliveries handed over so far. */
  taken = 0;
  private lastActivity = Date.now();
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly limits: Pick<ConsumeOptions, 'maxMessages' | 'idleMs'>) {}

  /** True once `maxMessages` deliveries were handed over. */
  reached(): boolean {
    const max = this.limits.maxMessages;
    return max !== undefined && this.taken >= max;
  }

  /** How many more deliveries may be handed over (Infinity without `maxMessages`). */
  left(): number {
    const max = this.limits.maxMessages;
    return max === undefined ? Infinity : max - this.taken;
  }

  /** A delivery came or finished: the idle clock starts again. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /**
   * Calls `stop` once `idleMs` passed since the last activity with nothing in
   * flight (`busy()` false); checks again later while busy. Nothing without
   * `idleMs` or once `stopping()`.
   */
  private armIdle(stopping: () => boolean, busy: () => boolean, stop: () => void): void {
    const idleMs = this.limits.idleMs;
    if (idleMs === undefined || stopping()) return;
    const left = this.lastActivity + idleMs - Date.now();
    this.idleTimer = setTimeout(() => {
      if (!busy() && Date.now() - this.lastActivity >= idleMs) stop();
      else this.armIdle(stopping, busy, stop);
    }, Math.max(10, left));
  }

  /**
   * Consuming really began (the consumer is registered, the link attached, a
   * socket subscribed): the idle clock starts, or starts again, from now.
   */
  startIdleClock(stopping: () => boolean, busy: () => boolean, stop: () => void): void {
    this.disarm();
    this.touch();
    this.armIdle(stopping, busy, stop);
  }

  /** Stops the idle timer (the connection is lost, or the loop ends). */
  disarm(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}
