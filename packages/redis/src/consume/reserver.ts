import type { Logger } from '@babelqueue/core';
import type { Delivery, ReservationKeeper } from '@babelqueue/core/binding';
import { HANDOVER_MARGIN_MS, LEASE_TICK_MS, leaseNow, RENEW_BELOW_MS, type Hold } from './lease.js';

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
  /** Its renewal bookkeeping (the read-ahead lease, then the full reservation). */
  readonly hold: Hold;
}

/** Whether the loop may hand a delivery over now ({@link Reserver.leaseState}). */
export type LeaseState = 'good' | 'doubtful' | 'lost';

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
  /** A lease renewal returned: a doubtful delivery is good again, or lost. */
  refresh(): void;
}

const IDLE: LoopLink = { released: () => {}, flushNow: () => true, demand: () => NOTHING, deliver: () => {}, refresh: () => {} };

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
  /** Whether the loop reserves a read-ahead beyond its free slots (see `readsAhead` in lease.ts). */
  abstract readonly readsAhead: boolean;
  /** Settles once the consume loop stopped reserving and tried to give its read-ahead back. */
  readonly stopped: Promise<void>;
  /** Called by the consume loop when it has stopped reserving and tried to give its read-ahead back. */
  markStopped: () => void = () => undefined;
  private pending: PendingAck[] = [];
  private flushLater = false;
  private link: LoopLink = IDLE;
  /** Read-ahead deliveries under their lease, not handed over yet. */
  private readonly leased = new Set<Reserved>();
  /** Read-ahead deliveries whose handlers began, their full reservations not written yet ({@link begin}). */
  private readonly beginning = new Set<Reserved>();
  private beginLater = false;
  private leaseTimer: NodeJS.Timeout | undefined;
  private renewingLeases = false;
  /** When a renewal last failed: the next one waits for the timer rather than hammer a failing server. */
  private renewFailedAt = 0;

  constructor(
    private readonly log: Logger,
    private readonly ids: Readonly<Record<string, unknown>>,
  ) {
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

  /** One script call pushing these read-ahead leases to `score`; resolves with a flag each (1 renewed, 0 gone). */
  protected abstract renewLeases(holds: readonly Hold[], score: string): Promise<unknown>;

  /**
   * One script call writing the full reservation of these read-ahead
   * deliveries, sent with EVAL (see `LuaScript.runInOrder`); a flag each (1
   * begun, 0 lapsed).
   */
  protected abstract beginLeases(holds: readonly Hold[]): Promise<unknown>;

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
    this.leased.clear();
    this.beginning.clear();
    clearTimeout(this.leaseTimer);
    this.leaseTimer = undefined;
  }

  /**
   * Starts renewing a delivery the layout just reserved: a read-ahead one's
   * lease while the loop holds it, a slot's full reservation at once.
   */
  protected track(delivery: Reserved): void {
    if (delivery.hold.leased) {
      this.leased.add(delivery);
      this.leaseTimer ??= setTimeout(() => this.renewDue(), LEASE_TICK_MS).unref();
    } else {
      delivery.hold.stop = this.hold(delivery.hold.renew);
    }
  }

  /** Stops every renewal of a delivery (it is settled or given back). */
  untrack(delivery: Reserved): void {
    this.leased.delete(delivery);
    delivery.hold.stop();
  }

  /**
   * Whether a delivery may go to a handler now: `good` (a full reservation,
   * or a lease with more than {@link HANDOVER_MARGIN_MS} left), `doubtful`
   * (wait for {@link renewNow}) or `lost` (the lease lapsed and the message
   * went back to the queue: drop it).
   */
  leaseState(delivery: Reserved): LeaseState {
    const { hold } = delivery;
    if (hold.lost) return 'lost';
    if (hold.leaseEndsMs === undefined || hold.leaseEndsMs - Date.now() > HANDOVER_MARGIN_MS) return 'good';
    return 'doubtful';
  }

  /** Renews the leases now (a doubtful delivery waits at the head); the loop hears of it through `refresh`. */
  renewNow(): void {
    if (this.renewingLeases || Date.now() - this.renewFailedAt < LEASE_TICK_MS) return;
    clearTimeout(this.leaseTimer);
    this.leaseTimer = undefined;
    this.renewDue();
  }

  /**
   * Handlers begin on these deliveries: the read-ahead ones get their full
   * reservation (legacy: the deadline member's score; zset: the pop's member
   * in place of the raw job), in one script call for all that begin within
   * one event-loop turn. One that settles with an ack within that turn needs
   * none: its ack ends the lease instead ({@link ack}). `now` writes the call
   * at once, before the handlers run (the consume loop asks for that once a
   * handler blocked the event loop, which would hold back a call left for the
   * next turn). The reply is not waited for: a lease that lapsed all the same
   * (the consumer stalled) is logged, and the message may be processed twice
   * (at-least-once).
   */
  begin(deliveries: readonly Reserved[], now: boolean): void {
    for (const delivery of deliveries) {
      const { hold } = delivery;
      if (!hold.leased) continue;
      this.leased.delete(delivery);
      hold.leaseEndsMs = undefined;
      hold.stop = this.hold(hold.renew);
      this.beginning.add(delivery);
    }
    if (this.beginning.size === 0) return;
    if (now) {
      this.flushBegins();
    } else if (!this.beginLater) {
      this.beginLater = true;
      setImmediate(() => {
        this.beginLater = false;
        this.flushBegins();
      });
    }
  }

  /**
   * Writes the full reservations still waiting for the turn's call, now: a
   * retry or dead-letter names the full reservation, so its script must reach
   * Redis after them (the call is an EVAL, which runs in the order sent).
   */
  flushBegins(): void {
    if (this.beginning.size === 0) return;
    const begun = [...this.beginning];
    this.beginning.clear();
    this.beginLeases(begun.map((d) => d.hold)).then(
      (flags) => {
        const lapsed = begun.filter((_, i) => (flags as number[])[i] !== 1);
        if (lapsed.length === 0) return;
        for (const delivery of lapsed) delivery.hold.stop();
        this.log.warn(
          { ...this.ids, count: lapsed.length },
          'a read-ahead reservation lapsed before its handler began; another consumer may process the message as well',
        );
      },
      (error: unknown) => {
        this.log.warn(
          { ...this.ids, count: begun.length, error: String(error) },
          'writing the full reservations of read-ahead deliveries whose handlers began failed; their leases lapse within seconds',
        );
      },
    );
  }

  /** One renewal call for the leases that run short; then the next look, while any is held. */
  private renewDue(): void {
    this.leaseTimer = undefined;
    const now = Date.now();
    const due = [...this.leased].filter((d) => d.hold.leaseEndsMs! - now < RENEW_BELOW_MS);
    if (due.length === 0) {
      this.scheduleLeases();
      return;
    }
    this.renewingLeases = true;
    const lease = leaseNow();
    this.renewLeases(due.map((d) => d.hold), lease.score)
      .then(
        (flags) => {
          let lost = 0;
          due.forEach((delivery, i) => {
            // Handed over or given back meanwhile: no longer the lease's.
            if (!this.leased.has(delivery)) return;
            if ((flags as number[])[i] === 1) {
              delivery.hold.leaseEndsMs = lease.endsMs;
            } else {
              delivery.hold.lost = true;
              this.leased.delete(delivery);
              lost += 1;
            }
          });
          if (lost > 0) {
            this.log.warn(
              { ...this.ids, count: lost },
              'read-ahead leases lapsed before a handler began (the consumer stalled); those messages went back to the queue and are not handed over here',
            );
          }
        },
        (error: unknown) => {
          this.renewFailedAt = Date.now();
          this.log.warn({ ...this.ids, count: due.length, error: String(error) }, 'renewing read-ahead leases failed; retrying');
        },
      )
      .finally(() => {
        this.renewingLeases = false;
        this.link.refresh();
        this.scheduleLeases();
      });
  }

  private scheduleLeases(): void {
    if (this.leased.size > 0 && this.leaseTimer === undefined) this.leaseTimer = setTimeout(() => this.renewDue(), LEASE_TICK_MS).unref();
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
  ack(delivery: Reserved, handle: Buffer): Promise<boolean> {
    // Its full reservation never went out: the ack ends the lease (zset: the raw job) instead.
    if (this.beginning.delete(delivery)) handle = delivery.hold.leaseArgs[0]!;
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
