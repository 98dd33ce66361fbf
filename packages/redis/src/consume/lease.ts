import { nowSeconds } from '../clock.js';

/**
 * How long a read-ahead reservation lasts, in seconds: the consume loop renews
 * it while it holds the delivery, so only a consumer that is gone (a crash, a
 * SIGKILL) lets it lapse, and then any sweep or migrate returns the message
 * within about this long instead of after `retryAfter`.
 */
export const READ_AHEAD_LEASE_S = 5;

/** How often the held leases are looked at. */
export const LEASE_TICK_MS = 500;

/** A lease with less than this left is renewed (one script call for all of them). */
export const RENEW_BELOW_MS = 3000;

/**
 * A read-ahead delivery is handed to a handler only while its lease has more
 * than this left: its reservation is extended to `retryAfter` as the handler
 * begins, and the extension must reach Redis before a sweep (of any consumer,
 * whose clock may be a little off) could take the message back.
 */
export const HANDOVER_MARGIN_MS = 1500;

/** The lease score written now, and when it ends on this clock (ms): the sweep takes a score ≤ floor(now). */
export function leaseNow(): { score: string; endsMs: number } {
  const end = nowSeconds() + READ_AHEAD_LEASE_S;
  return { score: String(end), endsMs: end * 1000 };
}

/**
 * Whether a layout with this `retryAfter` reads ahead. A reservation shorter
 * than the lease leaves no room for one; on the zset layout `null` turns off
 * the recovery of `:reserved`, which would leave a lapsed lease stranded (the
 * legacy sweep runs whatever `retryAfter` says).
 */
export function readsAhead(retryAfter: number | null, layout: 'legacy' | 'zset'): boolean {
  return retryAfter === null ? layout === 'legacy' : retryAfter >= READ_AHEAD_LEASE_S;
}

/** The renewal bookkeeping of one reserved delivery, kept by its reserver. */
export class Hold {
  /** On this clock (ms), when the read-ahead lease ends; undefined once the full reservation is written. */
  leaseEndsMs: number | undefined;
  /** The lease lapsed before a handler began: another consumer may have the message. */
  lost = false;
  /** Stops the renewal of the full reservation (the reservation keeper's). */
  stop: () => void = () => undefined;

  /**
   * @param leaseArgs what the layout's lease calls name: legacy `[member]`, zset `[raw job, member]`;
   *   the first is the reservation's handle while the lease holds it (what an ack then removes)
   * @param renew renews the full reservation (for the reservation keeper)
   * @param leaseEndsMs set for a read-ahead delivery, reserved under the lease
   */
  constructor(
    readonly leaseArgs: readonly Buffer[],
    readonly renew: () => Promise<boolean>,
    leaseEndsMs: number | undefined,
  ) {
    this.leaseEndsMs = leaseEndsMs;
  }

  /** Held under the read-ahead lease, its handler not begun. */
  get leased(): boolean {
    return this.leaseEndsMs !== undefined;
  }
}
