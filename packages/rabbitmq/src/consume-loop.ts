import type { Channel, Message } from 'amqplib';
import { pause, reconnectDelayMs, type ConsumeOptions, type Logger } from '@babelqueue/core';
import { type Delivery, DrainLimits, HandOver, Holds, LoopStop } from '@babelqueue/core/binding';
import { Acker } from './acker.js';
import type { ConnectionManager } from './connection.js';
import { RabbitMqDelivery, type DeliveryContext, type Lane } from './delivery.js';
import type { ResolvedOptions } from './options.js';
import type { Publisher } from './publisher.js';
import type { QueueDeclarer } from './queues.js';

/** What a consume loop needs from its transport. */
export interface ConsumerDeps {
  readonly connection: ConnectionManager;
  readonly queues: QueueDeclarer;
  readonly publisher: Publisher;
  readonly logger: Logger;
  readonly options: ResolvedOptions;
}

interface MutableLane extends Lane {
  closed: boolean;
}

/**
 * One consume loop on one queue, manual acknowledgement (at-least-once), in
 * either mode: `consume` (basic.consume with a prefetch window) or `get`
 * (basic.get polling, one poller per concurrency slot). When its channel or
 * connection is lost it opens a new channel once the connection is back and
 * carries on; the deliveries it held are redelivered by RabbitMQ.
 */
export class Consumer {
  private readonly concurrency: number;
  /** Deliveries being handled, and the job handling each. */
  private readonly inFlight: HandOver<RabbitMqDelivery>;
  private readonly holds: Holds;
  private readonly context: DeliveryContext;
  private readonly drain: DrainLimits;
  /** Asked for by the caller's signal, the transport's close, or a drain limit. */
  private readonly stop = new LoopStop();
  private slotFreed: (() => void) | undefined;

  constructor(
    private readonly deps: ConsumerDeps,
    private readonly queue: string,
    onDelivery: (delivery: Delivery) => Promise<void>,
    private readonly limits: ConsumeOptions,
  ) {
    this.concurrency = Math.max(1, Math.floor(limits.concurrency));
    this.drain = new DrainLimits(limits);
    this.holds = new Holds(deps.options.requeueDelayMs);
    this.context = { publisher: deps.publisher, logger: deps.logger, holds: this.holds };
    this.inFlight = new HandOver<RabbitMqDelivery>({
      queue, logger: deps.logger, onDelivery, drain: this.drain, stop: this.stop, abandoned: 'requeueing it', freed: () => this.slotFreed?.(),
    });
  }

  /** Consumes until stopped; resolves after every in-flight delivery settled. */
  async run(closing: AbortSignal): Promise<void> {
    const unfollow = this.stop.follow(this.limits.signal, closing);
    try {
      if (this.deps.options.mode === 'get') await this.getMode();
      else await this.consumeMode();
    } finally {
      this.stop.request();
      this.stopIdleClock();
      unfollow();
      await this.inFlight.settled();
      this.holds.flush();
    }
  }

  private async consumeMode(): Promise<void> {
    const prefetch = this.deps.options.prefetch ?? this.concurrency;
    while (!this.stop.stopping) {
      const lane = await this.openLane(prefetch);
      if (lane === undefined) return;
      const backlog: Message[] = [];
      let cancelled!: () => void;
      const ended = new Promise<'lost' | 'cancelled'>((resolve) => {
        lane.channel.once('close', () => resolve('lost'));
        cancelled = () => resolve('cancelled');
      });
      const pump = () => {
        while (backlog.length > 0 && this.inFlight.size < this.concurrency && this.reserve()) {
          this.inFlight.hand(new RabbitMqDelivery(this.queue, lane, backlog.shift()!, this.context));
        }
      };
      this.slotFreed = pump;
      let consumerTag: string;
      try {
        ({ consumerTag } = await lane.channel.consume(
          this.queue,
          (message) => {
            if (message === null) cancelled();
            else {
              backlog.push(message);
              pump();
            }
          },
          { noAck: false },
        ));
      } catch (error) {
        this.deps.logger.warn({ queue: this.queue, error: text(error) }, 'could not start consuming; retrying');
        await pause(this.deps.options.reconnect.initialDelayMs, this.stop.signal);
        continue;
      }
      this.startIdleClock();
      const why = await Promise.race([this.stop.stopped, ended]);
      this.stopIdleClock();
      this.slotFreed = undefined;
      if (why === 'stop') {
        // Messages still in the backlog stay unacknowledged and go back to the
        // queue when the channel closes.
        await lane.channel.cancel(consumerTag).catch(() => undefined);
        await this.finish(lane);
        return;
      }
      backlog.length = 0;
      this.deps.logger.warn(
        { queue: this.queue },
        why === 'cancelled'
          ? 'RabbitMQ cancelled the consumer (queue deleted?); subscribing again'
          : 'consumer channel lost; resuming on a new channel, unacknowledged deliveries are redelivered',
      );
      if (why === 'cancelled') {
        this.deps.queues.forget(this.deps.connection.current(), this.queue);
        lane.acker.flush();
        await lane.channel.close().catch(() => undefined);
      }
      await pause(this.deps.options.reconnect.initialDelayMs, this.stop.signal);
    }
  }

  private async getMode(): Promise<void> {
    while (!this.stop.stopping) {
      const lane = await this.openLane(undefined);
      if (lane === undefined) return;
      this.startIdleClock();
      await Promise.all(Array.from({ length: this.concurrency }, () => this.poller(lane)));
      this.stopIdleClock();
      if (this.stop.stopping) {
        await this.finish(lane);
        return;
      }
      this.deps.logger.warn({ queue: this.queue }, 'consumer channel lost; resuming on a new channel, unacknowledged deliveries are redelivered');
      await pause(this.deps.options.reconnect.initialDelayMs, this.stop.signal);
    }
  }

  /** One basic.get poller: get, handle, settle, repeat; sleeps with a doubling pause while the queue is empty. */
  private async poller(lane: MutableLane): Promise<void> {
    const { minMs, maxMs } = this.deps.options.poll;
    let emptyWaitMs = minMs;
    while (!this.stop.stopping && !lane.closed && this.reserve()) {
      let message: Message | false;
      try {
        message = await lane.channel.get(this.queue, { noAck: false });
      } catch (error) {
        this.drain.taken -= 1;
        if (!lane.closed) this.deps.logger.warn({ queue: this.queue, error: text(error) }, 'basic.get failed');
        return;
      }
      if (message === false) {
        this.drain.taken -= 1;
        await pause(emptyWaitMs, this.stop.signal);
        emptyWaitMs = Math.min(maxMs, emptyWaitMs * 2);
        continue;
      }
      emptyWaitMs = minMs;
      await this.inFlight.hand(new RabbitMqDelivery(this.queue, lane, message, this.context));
    }
  }

  /** Opens a channel on the current connection (waiting through outages); undefined once stopping. */
  private async openLane(prefetch: number | undefined): Promise<MutableLane | undefined> {
    for (let failures = 0; !this.stop.stopping; failures += 1) {
      try {
        const model = await Promise.race([this.deps.connection.open(true), this.stop.stopped]);
        if (model === 'stop') return undefined;
        await this.deps.queues.ensure(model, { kind: 'work', name: this.queue }, true);
        const channel: Channel = await model.createChannel();
        const open = { channel, closed: false };
        const lane: MutableLane = Object.assign(open, {
          acker: new Acker(open, (what, error) =>
            this.deps.logger.warn({ queue: this.queue, settle: what, error: text(error) }, 'settlement lost with its channel; RabbitMQ redelivers the message'),
          ),
        });
        channel.on('error', (error: Error) =>
          this.deps.logger.warn({ queue: this.queue, error: error.message }, 'consumer channel closed by the broker'),
        );
        channel.once('close', () => {
          lane.closed = true;
        });
        if (prefetch !== undefined) await channel.prefetch(prefetch);
        return lane;
      } catch (error) {
        if (this.deps.connection.terminal()) {
          if (this.stop.stopping) return undefined;
          throw error;
        }
        this.deps.logger.warn({ queue: this.queue, error: text(error) }, 'cannot open the consumer channel; retrying');
        // `failures` counts the failures before this one (0 at the first), so the
        // retry that follows is attempt failures + 1: the first waits initialDelayMs.
        await pause(reconnectDelayMs(this.deps.options.reconnect, failures + 1), this.stop.signal);
      }
    }
    return undefined;
  }

  /** Takes one slot of `maxMessages`; false once the limit is reached (and stops the loop). */
  private reserve(): boolean {
    if (this.stop.stopping) return false;
    if (this.drain.reached()) {
      if (this.inFlight.size === 0) this.stop.request();
      return false;
    }
    this.drain.taken += 1;
    return true;
  }

  /** Consuming began (the consumer is registered, or the pollers run): stop after `idleMs` without a delivery and with nothing in flight. */
  private startIdleClock(): void {
    this.drain.startIdleClock(() => this.stop.stopping, () => this.inFlight.size > 0, () => this.stop.request());
  }

  private stopIdleClock(): void {
    this.drain.disarm();
  }

  private async finish(lane: MutableLane): Promise<void> {
    await this.inFlight.settled();
    this.holds.flush();
    lane.acker.flush();
    await lane.channel.close().catch(() => undefined);
  }
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
