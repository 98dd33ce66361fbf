/** Options of {@link ReservationKeeper}. */
export interface ReservationKeeperOptions {
  /**
   * The shortest time one reservation may last, in ms. Every reservation held
   * for a quarter of it is renewed, so each is renewed before half of it is gone.
   */
  readonly reservationMs: number;
  /** A reservation was lost (its renewal said it is gone) or a renewal failed; says why, for a log line. */
  readonly onTrouble: (why: string, lost: boolean) => void;
}

interface Held {
  readonly renew: () => Promise<boolean>;
  since: number;
  renewing: boolean;
}

/**
 * Keeps the reservations of one consume loop alive while their handlers run,
 * so a slow handler that is still alive is never handed to a second consumer
 * (Redis `retry_after`, the SQS visibility timeout, a Service Bus lock). One
 * timer per loop, running only while something is held, renews every
 * reservation held for a quarter of `reservationMs`; holding and releasing a
 * delivery costs a map entry, not a timer. `close()` (the loop ended, the
 * transport closed) stops renewing everything: a consumer that is gone renews
 * nothing, and its reservations expire as the broker says.
 */
export class ReservationKeeper {
  private readonly held = new Map<number, Held>();
  private readonly everyMs: number;
  private timer: NodeJS.Timeout | undefined;
  private nextId = 0;

  constructor(private readonly options: ReservationKeeperOptions) {
    this.everyMs = Math.max(25, Math.floor(options.reservationMs / 4));
  }

  /**
   * Starts renewing one reservation with `renew`, which pushes its deadline out
   * and resolves false when the reservation is already gone. Returns the
   * function that stops it (call it when the delivery is settled).
   */
  hold(renew: () => Promise<boolean>): () => void {
    const id = this.nextId++;
    this.held.set(id, { renew, since: Date.now(), renewing: false });
    if (this.timer === undefined) this.schedule();
    return () => {
      this.held.delete(id);
    };
  }

  /** Stops renewing every reservation. */
  close(): void {
    this.held.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.tick(), this.everyMs);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const [id, entry] of this.held) {
      if (entry.renewing || now - entry.since < this.everyMs) continue;
      entry.renewing = true;
      entry.renew().then(
        (kept) => {
          entry.renewing = false;
          if (!this.held.has(id)) return;
          if (kept) {
            entry.since = Date.now();
            return;
          }
          this.held.delete(id);
          this.options.onTrouble('the reservation expired before it could be renewed; another consumer may get the message', true);
        },
        (error: unknown) => {
          entry.renewing = false;
          if (this.held.has(id)) {
            this.options.onTrouble(`renewing the reservation failed: ${error instanceof Error ? error.message : String(error)}`, false);
          }
        },
      );
    }
    if (this.held.size > 0) this.schedule();
  }
}
