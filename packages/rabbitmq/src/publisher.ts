import { once } from 'node:events';
import type { ChannelModel, ConfirmChannel, Message, Options } from 'amqplib';
import { ChannelSlot } from './channel-slot.js';
import type { ConnectionManager } from './connection.js';
import { BROKER, BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError } from './errors.js';
import type { Logger } from '@babelqueue/core';
import type { QueueDeclarer, QueueSpec } from './queues.js';

/** One message to put on a queue through the default exchange. */
export interface PublishRequest {
  /** The queue the message is routed to (routing key), declared as `spec` first. */
  readonly spec: QueueSpec;
  readonly body: Buffer;
  /** A fresh object per request: the publisher sets `mandatory` on it (a copy per message measured ~5 µs in amqplib). */
  readonly properties: Options.Publish;
  /** Resolve only once the broker confirmed it. */
  readonly confirm: boolean;
  /** Wait through a connection outage (and re-send a publish whose confirm was lost) instead of failing. */
  readonly wait: boolean;
}

interface Pending {
  readonly routingKey: string;
  readonly body: Buffer;
  returned: boolean;
}

/**
 * Publishes on one confirm channel. Every publish is `mandatory`, so a message
 * whose queue vanished after it was declared comes back (`basic.return`, which
 * RabbitMQ sends before the confirm) and the publish fails instead of the
 * broker dropping it silently.
 */
export class Publisher {
  private readonly slot: ChannelSlot<ConfirmChannel>;
  /** The unconfirmed publishes of each channel, oldest first (a Set: confirms remove them in O(1)). */
  private readonly pending = new WeakMap<ConfirmChannel, Set<Pending>>();
  private readonly drained = new WeakMap<ConfirmChannel, Promise<unknown>>();
  private readonly models = new WeakMap<ConfirmChannel, ChannelModel>();

  constructor(
    private readonly connection: ConnectionManager,
    private readonly queues: QueueDeclarer,
    private readonly logger: Logger,
  ) {
    this.slot = new ChannelSlot(connection, (model) => this.openChannel(model), logger, 'publish');
  }

  /** Sends `request`; see {@link PublishRequest} for when it resolves. */
  send(request: PublishRequest): Promise<void> {
    // Without `wait` a failure is final: the send itself is the answer, no async frame around it.
    return request.wait ? this.sendWaiting(request) : this.sendOnce(request);
  }

  private async sendWaiting(request: PublishRequest): Promise<void> {
    for (;;) {
      try {
        await this.sendOnce(request);
        return;
      } catch (error) {
        if (this.connection.terminal() || !isConnectionLoss(error)) throw error;
        this.logger.warn({ queue: request.spec.name }, 'publish lost with the connection; sending it again after the reconnect');
      }
    }
  }

  /**
   * Sends every request on the confirm channel before waiting for any confirm
   * (a confirm window): the queues are declared once, each message is written
   * as {@link send} writes it (pausing only when the socket asks to drain), and
   * each request settles as `send`'s would, a message lost with the connection
   * being sent again on its own when its request says `wait`. Resolves once
   * every request settled, with each one's failure (undefined where it was
   * confirmed), in the order given; never rejects.
   */
  async sendMany(requests: readonly PublishRequest[]): Promise<unknown[]> {
    const wait = requests.some((r) => r.wait);
    let channel: ConfirmChannel;
    try {
      channel = await this.prepare(requests.map((r) => r.spec), wait);
    } catch (error) {
      const settled = await Promise.allSettled(requests.map((request) => this.retried(request, error)));
      return settled.map((result) => (result.status === 'fulfilled' ? undefined : result.reason));
    }
    // One callback per message and one promise for the batch (not a promise per message).
    const failures = new Array<unknown>(requests.length).fill(undefined);
    let open = requests.length;
    if (open === 0) return failures;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const settle = (index: number, error?: unknown): void => {
      if (error !== undefined) failures[index] = error;
      if (--open === 0) finish();
    };
    const unconfirmed = this.pending.get(channel)!;
    // Whether to look for a pending drain: at first (a write elsewhere may have filled the socket), while
    // one is awaited, and after a write the socket refused; not once per message.
    let check = true;
    for (let index = 0; index < requests.length; index += 1) {
      if (check) {
        const draining = this.drained.get(channel);
        if (draining) await draining;
        else check = false;
      }
      const request = requests[index]!;
      const accepted = this.write(channel, unconfirmed, request, (error) => {
        if (error === undefined) settle(index);
        else if (request.wait) this.retried(request, error).then(() => settle(index), (retryError: unknown) => settle(index, retryError));
        else settle(index, error);
      });
      if (!accepted) check = true;
    }
    await finished;
    return failures;
  }

  /** `error` again, or the request sent once more on its own when a reconnect cures it. */
  private retried(request: PublishRequest, error: unknown): Promise<void> {
    if (!request.wait || this.connection.terminal() || !isConnectionLoss(error)) return Promise.reject(error);
    this.logger.warn({ queue: request.spec.name }, 'publish lost with the connection; sending it again after the reconnect');
    return this.send(request);
  }

  private sendOnce(request: PublishRequest): Promise<void> {
    let ready: ConfirmChannel | undefined;
    try {
      ready = this.ready(request.spec);
    } catch (error) {
      return Promise.reject(error);
    }
    return ready === undefined ? this.sendPrepared(request) : this.publishOn(ready, request);
  }

  private async sendPrepared(request: PublishRequest): Promise<void> {
    const channel = await this.prepare([request.spec], request.wait);
    const draining = this.drained.get(channel);
    if (draining) await draining;
    return this.publishOn(channel, request);
  }

  /**
   * The confirm channel when a publish to `spec` can be written at once: the
   * connection is up, its queues were declared on it, the channel is open and
   * not waiting to drain. Otherwise undefined, and the publish takes the
   * awaited path ({@link prepare}), which does each of these first.
   */
  private ready(spec: QueueSpec): ConfirmChannel | undefined {
    const model = this.connection.current();
    if (model === undefined || !this.queues.isDeclared(model, spec.name)) return undefined;
    if (spec.kind === 'delay' && !this.queues.isDeclared(model, spec.target)) return undefined;
    const channel = this.slot.current(model);
    return channel === undefined || this.drained.has(channel) ? undefined : channel;
  }

  /** Declares the queues of `specs` (once each) and resolves with the confirm channel. */
  private async prepare(specs: readonly QueueSpec[], wait: boolean): Promise<ConfirmChannel> {
    const model = await this.connection.open(wait);
    const seen = new Set<string>();
    for (const spec of specs) {
      if (seen.has(spec.name)) continue;
      seen.add(spec.name);
      // A delayed message expires into its target queue: it must exist by then,
      // or the broker drops the message at expiry.
      if (spec.kind === 'delay') await this.queues.ensure(model, { kind: 'work', name: spec.target }, wait);
      await this.queues.ensure(model, spec, wait);
    }
    return this.slot.get(wait);
  }

  /** Writes one message on `channel`; settles once it is confirmed (or at once without confirms). */
  private publishOn(channel: ConfirmChannel, request: PublishRequest): Promise<void> {
    const unconfirmed = this.pending.get(channel)!;
    return new Promise<void>((resolve, reject) => {
      this.write(channel, unconfirmed, request, (error) => (error === undefined ? resolve() : reject(error)));
    });
  }

  /**
   * Writes one message on `channel` and calls `settled` once: with no error
   * when the broker confirmed it (at once after the write without confirms),
   * else with the reason it is not on the queue. `unconfirmed` is the
   * channel's set of unconfirmed publishes. False when the socket asked to
   * drain (or the write failed).
   */
  private write(channel: ConfirmChannel, unconfirmed: Set<Pending>, request: PublishRequest, settled: (error?: Error) => void): boolean {
    const routingKey = request.spec.name;
    const entry: Pending = { routingKey, body: request.body, returned: false };
    let accepted: boolean;
    try {
      request.properties.mandatory = true;
      accepted = channel.publish('', routingKey, request.body, request.properties, (error) => {
        unconfirmed.delete(entry);
        if (entry.returned) {
          this.queues.forget(this.models.get(channel), routingKey);
          if (request.confirm) settled(new PublishNotConfirmedError(BROKER, routingKey, 'unroutable: the queue does not exist (deleted after it was declared?)'));
        } else if (!request.confirm) {
          // Settled when it was written.
        } else if (error) {
          const nacked = error instanceof Error && /nack/i.test(error.message);
          settled(
            new PublishNotConfirmedError(BROKER, 
              routingKey,
              nacked ? 'the broker refused it (basic.nack)' : 'the channel closed before the confirm arrived',
              { cause: error },
            ),
          );
        } else {
          settled();
        }
      });
    } catch (error) {
      settled(new BrokerUnavailableError(BROKER, `publish to "${routingKey}" not sent: the channel is closed`, { cause: error }));
      return false;
    }
    unconfirmed.add(entry);
    if (!accepted && !this.drained.has(channel)) {
      const drain = once(channel, 'drain').finally(() => this.drained.delete(channel));
      drain.catch(() => undefined);
      this.drained.set(channel, drain);
    }
    if (!request.confirm) settled();
    return accepted;
  }

  private async openChannel(model: ChannelModel): Promise<ConfirmChannel> {
    const channel = await model.createConfirmChannel();
    this.models.set(channel, model);
    this.pending.set(channel, new Set());
    channel.on('return', (message: Message) => this.onReturn(channel, message));
    // Wake publishes waiting for 'drain': on a closed channel they fail fast instead.
    channel.on('close', () => channel.emit('drain'));
    return channel;
  }

  private onReturn(channel: ConfirmChannel, message: Message): void {
    const routingKey = message.fields.routingKey;
    for (const entry of this.pending.get(channel) ?? []) {
      if (!entry.returned && entry.routingKey === routingKey && entry.body.equals(message.content)) {
        entry.returned = true;
        return;
      }
    }
    this.queues.forget(this.models.get(channel), routingKey);
    this.logger.error({ queue: routingKey }, 'RabbitMQ returned an unconfirmed publish: the queue does not exist; the message is lost');
  }
}

/** A failure that a reconnect cures (the publish itself was fine). */
function isConnectionLoss(error: unknown): boolean {
  if (error instanceof TransportClosedError) return false;
  if (error instanceof BrokerUnavailableError) return true;
  return error instanceof PublishNotConfirmedError && /channel closed/.test(error.message);
}
