import type { Connection, Delivery as AmqpDelivery, EventContext, Message as AmqpMessage, Receiver } from 'rhea';
import { pause, reconnectDelayMs, type ConsumeOptions, type Logger } from '@babelqueue/core';
import { type Delivery, DrainLimits, HandOver, Holds, LoopStop } from '@babelqueue/core/binding';
import type { ConnectionManager } from './connection.js';
import { ArtemisDelivery, type DeliveryContext } from './delivery.js';
import { queryMaxDeliveryAttempts } from './management.js';
import type { ResolvedOptions } from './options.js';
import type { Publisher } from './publisher.js';

/** What a consume loop needs from its transport. */
export interface ConsumeLoopDeps {
  readonly connection: ConnectionManager;
  readonly publisher: Publisher;
  readonly logger: Logger;
  readonly options: ResolvedOptions;
}

/** One attached receiving link and the credit it holds. */
interface Lane {
  readonly receiver: Receiver;
  closed: boolean;
  /** Credit granted and not yet used by a delivery. */
  credit: number;
}

/**
 * One consume loop on one queue: a receiving link with explicit settlement
 * and manual credit, never more than `concurrency` deliveries handed out at
 * once (credit is granted only for free slots, and within `maxMessages`). When
 * the connection or the link is lost it waits for the reconnect and attaches a
 * new link; the deliveries the old link held are redelivered by Artemis and
 * their late settlements are dropped, never sent on the new link.
 */
export class ConsumeLoop {
  private readonly concurrency: number;
  private readonly inFlight: HandOver<ArtemisDelivery>;
  private readonly holds: Holds;
  private readonly context: { -readonly [K in keyof DeliveryContext]: DeliveryContext[K] };
  private readonly drain: DrainLimits;
  /** Asked for by the caller's signal, the transport's close, or a drain limit. */
  private readonly stop = new LoopStop();
  private lane: Lane | undefined;

  constructor(
    private readonly deps: ConsumeLoopDeps,
    private readonly queue: string,
    onDelivery: (delivery: Delivery) => Promise<void>,
    private readonly limits: ConsumeOptions,
  ) {
    this.concurrency = Math.max(1, Math.floor(limits.concurrency));
    this.drain = new DrainLimits(limits);
    this.holds = new Holds(deps.options.requeueDelayMs);
    this.context = {
      publisher: deps.publisher,
      logger: deps.logger,
      holds: this.holds,
      brokerMaxDeliveryAttempts: deps.options.brokerMaxDeliveryAttempts,
    };
    this.inFlight = new HandOver<ArtemisDelivery>({
      queue, logger: deps.logger, onDelivery, drain: this.drain, stop: this.stop, abandoned: 'releasing it', freed: () => this.grant(),
    });
  }

  /** Consumes until stopped; resolves after every in-flight delivery settled. */
  async run(closing: AbortSignal): Promise<void> {
    const unfollow = this.stop.follow(this.limits.signal, closing);
    try {
      await this.attachLoop();
    } finally {
      this.stop.request();
      this.drain.disarm();
      unfollow();
      await this.inFlight.settled();
      this.holds.flush();
      if (this.lane) await this.detach(this.lane);
    }
  }

  private async attachLoop(): Promise<void> {
    let failures = 0;
    while (!this.stop.stopping) {
      const connection = await Promise.race([this.deps.connection.open(true), this.stop.stopped]);
      if (connection === 'stop') return;
      if (this.deps.options.brokerMaxDeliveryAttempts === undefined) {
        const learnt = await Promise.race([this.learnMaxDeliveryAttempts(connection), this.stop.stopped]);
        if (learnt === 'stop') return;
      }
      const lane = this.attach(connection);
      const why = await Promise.race([this.stop.stopped, this.ended(connection, lane)]);
      this.drain.disarm();
      if (why === 'stop') return;
      lane.closed = true;
      if (this.lane === lane) this.lane = undefined;
      // Deliveries still held for a delayed release belong to the dead link.
      this.holds.flush();
      failures = why === 'lost' ? 0 : failures + 1;
      this.deps.logger.warn(
        { queue: this.queue },
        why === 'lost'
          ? 'Artemis connection lost while consuming; attaching again after the reconnect, unsettled deliveries are redelivered'
          : 'Artemis closed the receiving link; attaching again',
      );
      if (failures > 0) await pause(reconnectDelayMs(this.deps.options.reconnect, failures), this.stop.signal);
    }
  }

  /**
   * Asks the broker for the queue's max-delivery-attempts before each attach,
   * so a setting changed at run time is picked up on the next one. When the
   * broker does not answer it (no `manage` role, management disabled), the
   * limit is unknown: every retry is then re-sent, never left to the
   * broker's count, which could move the message to Artemis's own
   * dead-letter address (or delete it) before `maxAttempts`.
   */
  private async learnMaxDeliveryAttempts(connection: Connection): Promise<void> {
    try {
      this.context.brokerMaxDeliveryAttempts = await queryMaxDeliveryAttempts(connection, this.queue, this.deps.options.sendTimeoutMs);
    } catch (error) {
      this.context.brokerMaxDeliveryAttempts = undefined;
      this.deps.logger.warn(
        { queue: this.queue, error: error instanceof Error ? error.message : String(error) },
        "cannot read the broker's max-delivery-attempts (management needs the manage role); every retry is re-sent, set brokerMaxDeliveryAttempts to use the broker's count",
      );
    }
  }

  private attach(connection: Connection): Lane {
    const receiver = connection.open_receiver({
      source: { address: this.queue, capabilities: ['queue'] },
      autoaccept: false,
      credit_window: 0,
    });
    const lane: Lane = { receiver, closed: false, credit: 0 };
    this.lane = lane;
    receiver.on('receiver_open', () => {
      this.startIdleClock();
      this.grant();
    });
    receiver.on('receiver_error', (context: EventContext) => {
      const error = context.receiver?.error as { condition?: string; description?: string } | undefined;
      this.deps.logger.warn(
        { queue: this.queue, error: [error?.condition, error?.description].filter(Boolean).join(': ') },
        'Artemis refused or closed the receiving link',
      );
    });
    receiver.on('message', (context: EventContext) => this.onMessage(lane, context));
    return lane;
  }

  /** Resolves when the link is detached by the broker or its connection is lost. */
  private ended(connection: Connection, lane: Lane): Promise<'lost' | 'closed'> {
    return Promise.race([
      this.deps.connection.lost(connection).then(() => 'lost' as const),
      new Promise<'closed'>((resolve) => lane.receiver.once('receiver_close', () => resolve('closed'))),
    ]);
  }

  private onMessage(lane: Lane, context: EventContext): void {
    lane.credit = Math.max(0, lane.credit - 1);
    const amqp = context.delivery as AmqpDelivery;
    const message = context.message as AmqpMessage;
    // Credit granted before a stop may still bring a message: give it straight back.
    if (this.stop.stopping || lane.closed || this.limitReached()) {
      amqp.release();
      return;
    }
    this.drain.taken += 1;
    void this.inFlight.hand(new ArtemisDelivery(this.queue, amqp, message, lane, this.context));
  }

  /** Tops the link's credit up to the free slots (and what `maxMessages` still allows). */
  private grant(): void {
    const lane = this.lane;
    if (lane === undefined || lane.closed || this.stop.stopping) return;
    const room = Math.min(this.concurrency - this.inFlight.size, this.drain.left());
    const add = room - lane.credit;
    if (add <= 0) return;
    lane.credit += add;
    lane.receiver.add_credit(add);
  }

  private limitReached(): boolean {
    return this.drain.reached();
  }

  /** The link is attached, consuming began: stop after `idleMs` without a delivery and with nothing in flight. */
  private startIdleClock(): void {
    this.drain.startIdleClock(() => this.stop.stopping, () => this.inFlight.size > 0, () => this.stop.request());
  }

  /** Detaches the link (its unsettled deliveries go back to the queue); bounded when the broker is gone. */
  private async detach(lane: Lane): Promise<void> {
    lane.closed = true;
    if (this.lane === lane) this.lane = undefined;
    const receiver = lane.receiver;
    if (receiver.is_closed() || !receiver.connection.is_open()) return;
    const closed = new Promise<void>((resolve) => receiver.once('receiver_close', () => resolve()));
    receiver.close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
  }
}
