import type { Delivery, ReservationKeeper } from '@babelqueue/core';

/** An ack waiting for the next script call; `handle` is the layout's handle value (the deadline or `:reserved` member). */
export interface PendingAck {
  readonly handle: Buffer;
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
  /** A delivery's handler is done and its ack is queued: its slot is free for the next delivery. */
  released(delivery: Delivery): void;
  /** Whether the `queued` acks go now rather than wait one event-loop turn for more. */
  flushNow(queued: number): boolean;
  /** What the loop can take now (nothing once it stops). */
  demand(): Want;
  /** Receives reserved deliveries, always before the acks of the same call resolve (none when the call failed). */
  deliver(deliveries: Reserved[]): void;
}

const IDLE: LoopLink = { released: () => {}, flushNow: () => true, demand: () => NOTHING, deliver: () => {} };

/**
 * The reserving side of one queue. Acks are not sent on their own: they ride
 * on a script call that settles them and reserves what the loop can take (its
 * free slots and read-ahead), in one round trip. The call goes as soon as the
 * loop says enough acks are queued, or nothing else can add to them, and
 * otherwise after one event-loop turn; several calls may be in flight at once
 * (Redis runs them in order). A successful ack still resolves only after Redis
 * ran it.
 */
export abstract class Reserver {
  /** Deliveries asked for (at most) by script calls still in flight. */
  reserving = 0;
  /** Settles once the consume loop stopped reserving and tried to give its read-ahead back. */
  readonly stopped: Promise<void>;
  /** Called by the consume loop when it has stopped reserving and tried to give its read-ahead back. */
  markStopped: () => void = () => undefined;
  private pending: PendingAck[] = [];
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

  /**
   * Queues the ack of `delivery` (its `handle`) for the next script call and
   * frees its slot in the loop; resolves with false when the reservation had
   * expired.
   */
  ack(delivery: Delivery, handle: Buffer): Promise<boolean> {
    const acked = new Promise<boolean>((resolve, reject) => this.pending.push({ handle, resolve, reject }));
    this.link.released(delivery);
    if (this.link.flushNow(this.pending.length)) {
      this.flush();
    } else if (!this.flushLater) {
      // One turn, so the acks of handlers finishing together share the call.
      this.flushLater = true;
      setImmediate(() => {
        this.flushLater = false;
        this.flush();
      });
    }
    return acked;
  }

  /** Reserves what `want` says now (taking queued acks along); resolves with how many arrived. */
  async take(want: Want): Promise<number> {
    return this.call(this.pending.splice(0), want);
  }

  private flush(): void {
    const acks = this.pending.splice(0);
    if (acks.length === 0) return;
    this.call(acks, this.link.demand()).catch(() => {
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
      this.reserving -= max;
      this.link.deliver([]);
      for (const ack of acks) ack.reject(error);
      throw error;
    }
    this.reserving -= max;
    this.link.deliver(result.deliveries);
    acks.forEach((ack, i) => ack.resolve(result.acked[i] === true));
    return result.deliveries.length;
  }
}
