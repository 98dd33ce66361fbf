import { setMaxListeners } from 'node:events';
import { type ConsumeOptions, type Logger } from '@babelqueue/core';
import { type Delivery, DrainLimits } from '@babelqueue/core/binding';
import type { PulsarAdmin } from './admin.js';
import type { PulsarConnection } from './connection.js';
import { errorText } from './errors.js';
import { BinaryConsumer, PartitionedTopicError } from './binary/binary-consumer.js';
import type { BrokerAddress } from './binary/broker-connection.js';
import { ConsumerSocket } from './consumer-socket.js';
import { PulsarDelivery, type DeliveryContext } from './delivery.js';
import type { ConsumerCommand } from './frames.js';
import type { ConsumerOwner, LoopConsumer, Received } from './loop-consumer.js';
import type { ResolvedOptions } from './options.js';
import type { Send } from './send.js';
import { topicPath, type Topic } from './topics.js';

/** What a consume loop needs from its transport. */
export interface LoopDeps {
  readonly connection: PulsarConnection;
  readonly admin: PulsarAdmin;
  readonly options: ResolvedOptions;
  readonly logger: Logger;
  /** Publishes a retry copy or a dead-letter record; resolves once it is stored. */
  send(queue: string, message: Send): Promise<void>;
}

/**
 * The consumers of one topic's subscription, in pull mode: the loop grants
 * permits for its free slots (at most `concurrency` deliveries in flight,
 * never more than `maxMessages` in all), so nothing is pushed that cannot be
 * handled.
 *
 * With a binary-protocol service known (`consumerProtocol: 'binary'`), one
 * {@link BinaryConsumer} holds the permits for the whole concurrency: it
 * prefetches them, since a consumer that goes away takes its messages back
 * to the subscription with its TCP connection. A partitioned topic, which
 * that consumer does not read, falls back to the consumer WebSockets below.
 *
 * Over the WebSocket API, each consumer by default has a zero receiver queue: the broker's WebSocket
 * service fetches a message only when a permit asks for it. A consumer that
 * service leaks (its client went away during the upgrade: apache/pulsar#4098,
 * the consumer lives on until the broker restarts) then holds nothing, where
 * one with a receiver queue would keep that many messages from every other
 * consumer for good. One zero-queue consumer fetches one message at a time, so
 * the loop opens several sockets (`consumerSockets`) to keep throughput.
 * A zero-queue consumer cannot take a producer's batch (the service closes
 * that consumer and the socket goes silent), nor can a partitioned topic have
 * one: the loop notices (a silent socket whose consumer the broker no longer
 * lists; the refusal) and prefetches from then on. A zero-queue consumer also
 * loses its request when its topic moves inside the broker; a silent socket
 * whose consumer the broker lists without permits is reopened.
 *
 * Deliveries settle on the socket that carried them, or on any open one
 * (Pulsar settles by message id on the subscription), and a redelivered copy
 * of a message still being handled is not handed over twice.
 */
export class ConsumeLoop implements ConsumerOwner {
  private readonly concurrency: number;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly stopController = new AbortController();
  private sockets: LoopConsumer[];
  private readonly contexts = new Map<LoopConsumer, DeliveryContext>();
  private readonly drain: DrainLimits;
  /** Consumers prefetch (a batch reached a zero-queue consumer, or the topic is partitioned). */
  private prefetch: boolean;
  private checking = false;
  /** When each silent socket's consumer was first found unlisted, by name, while it still is. */
  private unlistedSince = new Map<string, number>();

  constructor(
    private readonly deps: LoopDeps,
    private readonly queue: string,
    private readonly topic: Topic,
    private readonly onDelivery: (delivery: Delivery) => Promise<void>,
    private readonly limits: ConsumeOptions,
  ) {
    const { options } = deps;
    // Every consumer socket (16 by default) listens for the stop: more than the
    // default 10 listeners is expected, not a leak, and Node would warn of one.
    setMaxListeners(0, this.stopController.signal);
    this.concurrency = Math.max(1, Math.floor(limits.concurrency));
    this.drain = new DrainLimits(limits);
    const binary = options.consumerProtocol === 'binary' && options.serviceUrl !== undefined;
    this.prefetch = binary || (options.receiverQueueSize !== undefined && options.receiverQueueSize > 0);
    this.sockets = binary ? [this.adopt(this.binaryConsumer(options.serviceUrl as string))] : this.consumerSockets();
  }

  /** One binary-protocol consumer for the whole concurrency. */
  private binaryConsumer(serviceUrl: string): BinaryConsumer {
    const { options, connection, logger } = this.deps;
    const service: BrokerAddress = {
      url: serviceUrl,
      tls: options.tls,
      token: options.token === undefined ? undefined : () => connection.token(),
      reached: (ok) => {
        connection.reachable = ok;
      },
    };
    return new BinaryConsumer(service, options, logger, this.queue, this.topic.name, this.concurrency, this);
  }

  /** The consumer WebSockets, the concurrency split among them. */
  private consumerSockets(): ConsumerSocket[] {
    const { options } = this.deps;
    // Exclusive and Failover subscriptions take one consumer at a time; a take
    // in order (a redrive's drain) needs the broker's order, which several
    // consumers of a Shared subscription would interleave.
    const shared = options.subscriptionType === 'Shared' || options.subscriptionType === 'Key_Shared';
    const count = shared && this.limits.inOrder !== true ? Math.min(this.concurrency, options.consumerSockets) : 1;
    const path = `/ws/v2/consumer/${topicPath(this.topic)}/${encodeURIComponent(options.subscription)}`;
    return Array.from({ length: count }, (_, i) => {
      const capacity = Math.floor(this.concurrency / count) + (i < this.concurrency % count ? 1 : 0);
      return this.adopt(new ConsumerSocket(this.deps.connection, options, this.deps.logger, this.queue, path, capacity, this));
    });
  }

  /** Gives a consumer its deliveries' context. */
  private adopt<C extends LoopConsumer>(consumer: C): C {
    const { options, logger } = this.deps;
    this.contexts.set(consumer, {
      subscriptionType: options.subscriptionType,
      send: (target, message) => this.deps.send(target, message),
      command: (command) => this.command(consumer, command),
      stopping: this.stopController.signal,
      logger,
    });
    return consumer;
  }

  /** Consumes until stopped; resolves after every in-flight delivery settled. */
  async run(stop: AbortSignal): Promise<void> {
    const signals = [this.limits.signal, stop];
    const onAbort = () => this.requestStop();
    for (const signal of signals) {
      if (signal.aborted) this.requestStop();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    const check = this.prefetch ? undefined : setInterval(() => void this.checkSilentSockets(), Math.ceil(this.deps.options.consumerCheckMs / 2));
    check?.unref();
    try {
      try {
        await this.runConsumers();
      } catch (error) {
        if (!(error instanceof PartitionedTopicError) || this.stopping) throw error;
        this.deps.logger.info(
          { queue: this.queue },
          'the topic is partitioned: consuming it over the WebSocket API, prefetching (the binary-protocol consumer reads one topic)',
        );
        this.contexts.clear();
        this.sockets = this.consumerSockets();
        await this.runConsumers();
      }
    } finally {
      this.requestStop();
      clearInterval(check);
      this.drain.disarm();
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
      // In-flight deliveries settle on the sockets before they close.
      await Promise.allSettled(this.inFlight.values());
      await Promise.all(this.sockets.map((socket) => socket.close()));
    }
  }

  /** Runs every consumer until the stop; a configuration failure of one stops them all. */
  private async runConsumers(): Promise<void> {
    const runs = this.sockets.map((socket) => socket.run(this.stopController.signal));
    await Promise.all(runs.map((run) => run.catch((error: unknown) => {
      if (!(error instanceof PartitionedTopicError)) this.requestStop();
      throw error;
    })));
  }

  /** {@inheritDoc ConsumerOwner.wanted} */
  wanted(socket: LoopConsumer): number {
    if (this.stopping) return 0;
    let elsewhere = 0;
    for (const other of this.sockets) if (other !== socket) elsewhere += other.outstanding;
    return Math.min(socket.capacity - socket.inFlight, this.drain.left() - elsewhere);
  }

  /** {@inheritDoc ConsumerOwner.receiverQueueSize} */
  receiverQueueSize(socket: LoopConsumer): number {
    const configured = this.deps.options.receiverQueueSize;
    if (configured !== undefined && configured > 0) return configured;
    return this.prefetch ? socket.capacity : 0;
  }

  /** {@inheritDoc ConsumerOwner.zeroQueueRefused} */
  zeroQueueRefused(): void {
    this.startPrefetching('the topic is partitioned, and Pulsar gives a partitioned topic no zero-queue consumer');
  }

  /** {@inheritDoc ConsumerOwner.receive} */
  receive(socket: LoopConsumer, message: Received): void {
    if (this.inFlight.has(message.messageId)) {
      // Redelivered after a reconnect while the first copy is still being
      // handled: its settlement (by message id) covers this copy too.
      this.deps.logger.debug({ queue: this.queue }, 'redelivered copy of a message still in flight; not handed over twice');
      socket.grant();
      return;
    }
    if (this.stopping || this.drain.reached()) return; // left unacknowledged: redelivered once the socket closes
    this.drain.taken += 1;
    this.drain.touch();
    socket.inFlight += 1;
    const delivery = new PulsarDelivery(this.queue, message, this.contexts.get(socket) as DeliveryContext);
    const job: Promise<void> = this.onDelivery(delivery)
      .catch((error: unknown) => {
        this.deps.logger.error({ queue: this.queue, error: errorText(error) }, 'delivery handler threw');
      })
      .finally(() => {
        if (delivery.abandon()) this.deps.logger.error({ queue: this.queue }, 'delivery was not settled; negatively acknowledged it');
        this.inFlight.delete(delivery.messageId);
        socket.inFlight -= 1;
        this.drain.touch();
        if (this.drain.reached() && this.inFlight.size === 0) this.requestStop();
        for (const each of this.sockets) each.grant();
      });
    this.inFlight.set(delivery.messageId, job);
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  private requestStop(): void {
    if (!this.stopping) this.stopController.abort();
  }

  /** A settlement goes on the socket that carried the message, else on any open one. */
  private command(socket: LoopConsumer, command: ConsumerCommand): boolean {
    if (socket.command(command)) return true;
    return this.sockets.some((other) => other !== socket && other.command(command));
  }

  /**
   * A zero-queue socket waiting on permits past `consumerCheckMs` has its
   * consumer looked up on the subscription. Two states of the broker's
   * WebSocket service leave such a socket silent for good, and both are
   * dropped (the socket reopens): a consumer the broker no longer lists, which
   * the service closed on meeting a producer's batch (the loop prefetches from
   * then on), and a listed one without permits or messages, which lost its
   * request when the topic moved (apache/pulsar#15679: a zero-queue consumer
   * does not ask again after it reconnects inside the service). A consumer
   * the service is reconnecting after the topic moved is briefly unlisted too,
   * so only one unlisted for `consumerCheckMs` on end counts as closed.
   */
  private async checkSilentSockets(): Promise<void> {
    if (this.checking || this.stopping) return;
    const since = Date.now() - this.deps.options.consumerCheckMs;
    const silent = this.sockets
      .filter((socket) => socket.open && socket.queueSize === 0 && socket.outstanding > 0 && socket.lastActivity <= since)
      .map((socket) => ({ socket, name: socket.name }));
    if (silent.length === 0) {
      this.unlistedSince.clear();
      return;
    }
    this.checking = true;
    try {
      const listed = await this.deps.admin.consumers(this.topic, this.deps.options.subscription);
      const unlistedSince = this.unlistedSince;
      this.unlistedSince = new Map();
      for (const { socket, name } of silent) {
        if (name === undefined || socket.name !== name) continue; // reopened meanwhile
        const consumer = listed.get(name);
        if (consumer === undefined) {
          const first = unlistedSince.get(name) ?? Date.now();
          if (first > since) {
            this.unlistedSince.set(name, first);
            continue;
          }
          this.startPrefetching('a producer\'s batch reached a zero-queue consumer, which Pulsar cannot hand one');
          socket.drop();
        } else if (consumer.availablePermits === 0 && consumer.unackedMessages === 0) {
          this.deps.logger.warn({ queue: this.queue }, 'a Pulsar consumer lost its permits inside the broker (the topic moved); reopening its socket');
          socket.drop();
        }
      }
    } catch (error) {
      this.deps.logger.debug({ queue: this.queue, error: errorText(error) }, 'cannot look up the subscription\'s consumers; checking again later');
    } finally {
      this.checking = false;
    }
  }

  private startPrefetching(why: string): void {
    if (this.prefetch) return;
    this.prefetch = true;
    const most = Math.max(...this.sockets.map((socket) => socket.capacity));
    this.deps.logger.warn(
      { queue: this.queue, receiverQueueSize: most },
      `Pulsar consumers prefetch from now on: ${why}. A consumer the broker's WebSocket service leaks (apache/pulsar#4098) can then hold up to receiverQueueSize messages until the broker restarts; set receiverQueueSize to choose this up front`,
    );
  }

  /**
   * {@inheritDoc ConsumerOwner.opened}
   * Consuming began: stop after `idleMs` without a delivery and with nothing in flight.
   */
  opened(): void {
    this.drain.startIdleClock(() => this.stopping, () => this.inFlight.size > 0, () => this.requestStop());
  }

  /** {@inheritDoc ConsumerOwner.lost} While no socket is subscribed, the idle clock waits. */
  lost(): void {
    if (!this.sockets.some((socket) => socket.open)) this.drain.disarm();
  }
}
