import type { Logger } from '../runtime/logger.js';
import type { Delivery } from '../transport/transport.js';
import type { DrainLimits } from './drain-limits.js';
import type { LoopStop } from './loop-stop.js';

/** A push loop's delivery: it can be handed back when the runtime left it unsettled. */
export interface AbandonableDelivery extends Delivery {
  /** Hands the delivery back to the broker if nothing settled it; true when it did. */
  abandon(): boolean;
}

/** What a {@link HandOver} works with. */
export interface HandOverOptions<D extends AbandonableDelivery> {
  readonly queue: string;
  readonly logger: Logger;
  readonly onDelivery: (delivery: D) => Promise<void>;
  readonly drain: DrainLimits;
  readonly stop: LoopStop;
  /** What happens to a delivery the runtime left unsettled, for the log: "requeueing it". */
  readonly abandoned: string;
  /** Called after each settlement: a slot is free (grant credit, take the backlog). */
  readonly freed?: () => void;
}

/**
 * Hands a push loop's deliveries to the runtime and keeps count: the jobs in
 * flight, the drain limits touched on each hand-over and settlement, a handler
 * that threw logged (never its message), a delivery left unsettled handed back,
 * and the loop stopped once `maxMessages` were taken and every one settled.
 */
export class HandOver<D extends AbandonableDelivery> {
  private readonly jobs = new Map<D, Promise<void>>();

  constructor(private readonly options: HandOverOptions<D>) {}

  /** Deliveries being handled now. */
  get size(): number {
    return this.jobs.size;
  }

  /** Resolves once every delivery handed over so far has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.jobs.values());
  }

  /** Hands `delivery` over; the returned job ends when it is settled (or handed back). */
  hand(delivery: D): Promise<void> {
    this.options.drain.touch();
    const job = this.run(delivery);
    this.jobs.set(delivery, job);
    return job;
  }

  /** One async function per delivery (not a promise chain): fewer promises and closures on the hot path. */
  private async run(delivery: D): Promise<void> {
    const { queue, logger, drain, stop } = this.options;
    try {
      await this.options.onDelivery(delivery);
    } catch (error) {
      logger.error({ queue, error: error instanceof Error ? error.message : String(error) }, 'delivery handler threw');
    } finally {
      if (delivery.abandon()) logger.error({ queue }, `delivery was not settled; ${this.options.abandoned}`);
      this.jobs.delete(delivery);
      drain.touch();
      if (drain.reached() && this.jobs.size === 0) stop.request();
      this.options.freed?.();
    }
  }
}
