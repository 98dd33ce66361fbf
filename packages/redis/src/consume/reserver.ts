import type { Delivery, ReservationKeeper } from '@babelqueue/core';

/** An ack waiting for the next script call; `args` are the layout's handle values. */
export interface PendingAck {
  readonly args: readonly Buffer[];
  resolve(acked: boolean): void;
  reject(error: unknown): void;
}

/** A reserved delivery the loop can still take back before a handler sees it. */
export interface Reserved extends Delivery {
  /**
   * Stops renewing the reservation and returns the layout's handle values for
   * {@link Reserver.giveBack}. Only for a delivery never handed over.
   */
  withdraw(): readonly Buffer[];
}

/** What one script call did: per-ack results (false = the reservation had expired) and new deliveries. */
export interface Exchanged {
  readonly acked: readonly boolean[];
  readonly deliveries: Reserved[];
}

/**
 * What one script call asks for: one delivery per free slot, and up to
 * `ahead` more as read-ahead, of which the script takes only what a deep
 * ready list can spare.
 */
export interface Want {
  readonly slots: number;
  readonly ahead: number;
}

/** Asks for nothing: the call only carries acks. */
export const NOTHING: Want = { slots: 0, ahead: 0 };

/** How the consume loop talks to its reserver. */
export interface LoopLink {
  /** Deliveries handed over and not yet finished. */
  busy(): number;
  /** What the loop can take once `acking` in-flight deliveries complete (nothing when it stops). */
  demand(acking: number): Want;
  /** Receives reserved deliveries, always before the acks that made room for them resolve. */
  deliver(deliveries: Reserved[]): void;
}

const IDLE: LoopLink = { busy: () => 0, demand: () => NOTHING, deliver: () => {} };

/**
 * The reserving side of one queue. Acks are not sent on their own: they wait
 * (one event-loop turn at most) for the next script call, which settles them
 * and reserves new deliveries for the slots they free and the loop's
 * read-ahead, in one round trip. A successful ack still resolves only after
 * Redis ran it.
 */
export abstract class Reserver {
  /** Deliveries asked for (at most) by script calls still in flight. */
  reserving = 0;
  /** Settles once the consume loop stopped reserving and tried to give its read-ahead back. */
  readonly stopped: Promise<void>;
  /** Called by the consume loop when it has stopped reserving and tried to give its read-ahead back. */
  markStopped: () => void = () => undefined;
  private pending: PendingAck[] = [];
  private flushSoon = false;
  private flushLater = false;
  private link: LoopLink = IDLE;

  constructor() {
    this.stopped = new Promise((resolve) => (this.markStopped = resolve));
  }

  /** One script call: settle `acks` in order, then reserve what `want` says. */
  protected abstract exchange(acks: readonly PendingAck[], want: Want): Promise<Exchanged>;

  /**
   * Puts deliveries that were reserved but never handed over back at the head
   * of the ready list, in their order, in one script call; resolves with how
   * many went back (one whose reservation had expired is left alone).
   */
  abstract giveBack(deliveries: readonly Reserved[]): Promise<number>;

  /** Waits for work after an empty reserve: at most `ms`, less when the signal aborts. */
  abstract idle(ms: number, signal: AbortSignal): Promise<void>;

  /** A reserve brought deliveries (resets a poll back-off). */
  active(): void {}

  /** Renews the reservations this reserver handed over; undefined when they never expire. */
  protected keeper: ReservationKeeper | undefined;

  /**
   * Starts renewing one handed-over reservation with `renew`; it runs until the
   * delivery is settled (call the returned function) or the reserver closes
   * (its consume loop ended, the transport closed): a consumer that is gone
   * renews nothing.
   */
  hold(renew: () => Promise<boolean>): () => void {
    return this.keeper === undefined ? () => undefined : this.keeper.hold(renew);
  }

  /** Releases what the reserver opened (renewals; a blocking connection in the zset layout). */
  close(): void {
    this.keeper?.close();
  }

  attach(link: LoopLink): void {
    this.link = link;
  }

  detach(): void {
    this.link = IDLE;
  }

  /** Queues an ack for the next script call; resolves with false when the reservation had expired. */
  ack(args: readonly Buffer[]): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ args, resolve, reject });
      if (this.pending.length >= this.link.busy()) {
        // Every delivery in flight is waiting for its ack: no reason to wait for more.
        if (!this.flushSoon) {
          this.flushSoon = true;
          queueMicrotask(() => {
            this.flushSoon = false;
            this.flush();
          });
        }
      } else if (!this.flushLater) {
        // One turn, so the acks of handlers finishing together share the call.
        this.flushLater = true;
        setImmediate(() => {
          this.flushLater = false;
          this.flush();
        });
      }
    });
  }

  /** Reserves what `want` says now (taking queued acks along); resolves with how many arrived. */
  async take(want: Want): Promise<number> {
    return this.call(this.pending.splice(0), want);
  }

  private flush(): void {
    const acks = this.pending.splice(0);
    if (acks.length === 0) return;
    this.call(acks, this.link.demand(acks.length)).catch(() => {
      // Already reported: every ack of the call was rejected with the error.
    });
  }

  private async call(acks: PendingAck[], want: Want): Promise<number> {
    const max = want.slots + want.ahead;
    this.reserving += max;
    let result: Exchanged;
    try {
      result = await this.exchange(acks, want);
    } catch (error) {
      for (const ack of acks) ack.reject(error);
      throw error;
    } finally {
      this.reserving -= max;
    }
    this.link.deliver(result.deliveries);
    acks.forEach((ack, i) => ack.resolve(result.acked[i] === true));
    return result.deliveries.length;
  }
}
