import WebSocket from 'ws';
import { pause, reconnectDelayMs, type ConsumeOptions, type Logger } from '@babelqueue/core';
import { type Delivery, DrainLimits } from '@babelqueue/core/binding';
import { isConfigurationFailure, type PulsarConnection } from './connection.js';
import { PulsarDelivery, type DeliveryContext } from './delivery.js';
import { parseFrame, type ConsumerCommand, type ConsumerMessage } from './frames.js';
import type { ResolvedOptions } from './options.js';
import type { Send } from './send.js';
import { topicPath, type Topic } from './topics.js';

/** What a consume loop needs from its transport. */
export interface LoopDeps {
  readonly connection: PulsarConnection;
  readonly options: ResolvedOptions;
  readonly logger: Logger;
  /** Publishes a retry copy or a dead-letter record; resolves once it is stored. */
  send(queue: string, message: Send): Promise<void>;
}

/**
 * One consumer WebSocket on one topic's subscription, in pull mode: the loop
 * grants the broker a permit for each free slot (at most `concurrency`
 * deliveries in flight, never more than `maxMessages` in all), so nothing is
 * pushed that cannot be handled. When the socket drops it reconnects with
 * backoff; deliveries still in flight settle on the new socket (Pulsar
 * settles by message id on the subscription), and a redelivered copy of a
 * message still being handled is not handed over twice.
 */
export class ConsumeLoop {
  private readonly concurrency: number;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly stopController = new AbortController();
  private readonly context: DeliveryContext;
  private socket: WebSocket | undefined;
  /** Permits granted on the current socket and not yet used. */
  private outstanding = 0;
  private readonly drain: DrainLimits;

  constructor(
    private readonly deps: LoopDeps,
    private readonly queue: string,
    private readonly topic: Topic,
    private readonly onDelivery: (delivery: Delivery) => Promise<void>,
    private readonly limits: ConsumeOptions,
  ) {
    this.concurrency = Math.max(1, Math.floor(limits.concurrency));
    this.drain = new DrainLimits(limits);
    this.context = {
      subscriptionType: deps.options.subscriptionType,
      send: (queue, message) => deps.send(queue, message),
      command: (command) => this.command(command),
      stopping: this.stopController.signal,
      logger: deps.logger,
    };
  }

  /** Consumes until stopped; resolves after every in-flight delivery settled. */
  async run(stop: AbortSignal): Promise<void> {
    const signals = [this.limits.signal, stop];
    const onAbort = () => this.requestStop();
    for (const signal of signals) {
      if (signal.aborted) this.requestStop();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    this.armIdle();
    try {
      await this.loop();
    } finally {
      this.requestStop();
      this.drain.disarm();
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
      // In-flight deliveries settle on the socket before it closes.
      await Promise.allSettled(this.inFlight.values());
      await closeGently(this.socket);
      this.socket = undefined;
    }
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  private requestStop(): void {
    if (!this.stopping) this.stopController.abort();
  }

  private async loop(): Promise<void> {
    let connected = false;
    for (let failures = 0; !this.stopping; ) {
      let ws: WebSocket | 'stop';
      const opening = this.deps.connection.openSocket(this.path(), this.query());
      try {
        // A stop does not wait for a handshake that hangs (a black-holed broker).
        ws = await Promise.race([opening, this.stopped()]);
      } catch (error) {
        if (!connected && isConfigurationFailure(error)) throw error;
        failures += 1;
        this.deps.logger.warn({ queue: this.queue, attempt: failures, error: text(error) }, 'cannot open the Pulsar consumer WebSocket; retrying');
        await pause(reconnectDelayMs(this.deps.options.reconnect, failures), this.stopController.signal);
        continue;
      }
      if (ws === 'stop' || this.stopping) {
        opening.then((late) => late.terminate(), () => undefined);
        return;
      }
      if (connected) this.deps.logger.info({ queue: this.queue }, 'Pulsar consumer WebSocket reconnected');
      connected = true;
      failures = 0;
      const closed = this.attach(ws);
      const why = await Promise.race([closed.then(() => 'lost' as const), this.stopped()]);
      if (why === 'stop') return;
      this.socket = undefined;
      this.deps.logger.warn(
        { queue: this.queue, inFlight: this.inFlight.size },
        'Pulsar consumer WebSocket lost; reconnecting (unacknowledged messages are redelivered)',
      );
      failures += 1;
      await pause(reconnectDelayMs(this.deps.options.reconnect, failures), this.stopController.signal);
    }
  }

  /** Binds a fresh socket: frames become deliveries, and the first permits go out. Resolves when it closes. */
  private attach(ws: WebSocket): Promise<void> {
    this.socket = ws;
    this.outstanding = 0;
    ws.on('message', (data) => this.receive(data));
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    this.grant();
    return closed;
  }

  private receive(data: WebSocket.RawData): void {
    const frame = parseFrame(data) as Partial<ConsumerMessage> | undefined;
    if (frame === undefined || typeof frame.messageId !== 'string' || typeof frame.payload !== 'string') {
      this.deps.logger.warn({ queue: this.queue }, 'ignored a frame from the Pulsar consumer WebSocket that is not a message');
      return;
    }
    this.outstanding = Math.max(0, this.outstanding - 1);
    if (this.inFlight.has(frame.messageId)) {
      // Redelivered after a reconnect while the first copy is still being
      // handled: its settlement (by message id) covers this copy too.
      this.deps.logger.debug({ queue: this.queue }, 'redelivered copy of a message still in flight; not handed over twice');
      this.grant();
      return;
    }
    if (this.stopping || this.limitReached()) return; // left unacknowledged: redelivered once the socket closes
    this.drain.taken += 1;
    this.drain.touch();
    const delivery = new PulsarDelivery(this.queue, frame as ConsumerMessage, this.context);
    const job: Promise<void> = this.onDelivery(delivery)
      .catch((error: unknown) => {
        this.deps.logger.error({ queue: this.queue, error: text(error) }, 'delivery handler threw');
      })
      .finally(() => {
        if (delivery.abandon()) this.deps.logger.error({ queue: this.queue }, 'delivery was not settled; negatively acknowledged it');
        this.inFlight.delete(delivery.messageId);
        this.drain.touch();
        if (this.limitReached() && this.inFlight.size === 0) this.requestStop();
        this.grant();
      });
    this.inFlight.set(delivery.messageId, job);
  }

  /** Tops the permits up to the free slots (and what is left of `maxMessages`). */
  private grant(): void {
    if (this.stopping) return;
    const want = Math.min(this.concurrency - this.inFlight.size, this.drain.left()) - this.outstanding;
    if (want <= 0) return;
    if (this.command({ type: 'permit', permitMessages: want })) this.outstanding += want;
  }

  private command(command: ConsumerCommand): boolean {
    const ws = this.socket;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(command));
    return true;
  }

  private limitReached(): boolean {
    return this.drain.reached();
  }

  private path(): string {
    return `/ws/v2/consumer/${topicPath(this.topic)}/${encodeURIComponent(this.deps.options.subscription)}`;
  }

  private query(): Record<string, string> {
    const { options } = this.deps;
    return {
      subscriptionType: options.subscriptionType,
      subscriptionInitialPosition: options.initialPosition === 'earliest' ? 'Earliest' : 'Latest',
      pullMode: 'true',
      receiverQueueSize: String(Math.min(1000, options.receiverQueueSize ?? this.concurrency)),
      negativeAckRedeliveryDelay: String(options.negativeAckRedeliveryDelayMs),
    };
  }

  /** Stop after `idleMs` without a delivery and with nothing in flight. */
  private armIdle(): void {
    this.drain.armIdle(() => this.stopping, () => this.inFlight.size > 0, () => this.requestStop());
  }

  private stopped(): Promise<'stop'> {
    const signal = this.stopController.signal;
    if (signal.aborted) return Promise.resolve('stop');
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve('stop'), { once: true }));
  }
}

/** Closes a socket and waits (briefly) for the close handshake, so commands sent before it reach the broker. */
async function closeGently(ws: WebSocket | undefined): Promise<void> {
  if (ws === undefined || ws.readyState === WebSocket.CLOSED) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      ws.terminate();
      resolve();
    }, 2000);
    ws.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    ws.close();
  });
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
