import type { Channel, ChannelModel } from 'amqplib';
import { ChannelSlot } from './channel-slot.js';
import type { ConnectionManager } from './connection.js';
import type { Logger } from '@babelqueue/core';

/** How the binding declares its queues (the transport's `queueType` and `deliveryLimit`). */
export interface QueueKind {
  readonly queueType: 'classic' | 'quorum';
  readonly deliveryLimit: number | undefined;
}

/** The declaration arguments of a work queue or DLQ of `kind` (none for a classic queue). */
export function workQueueArguments(kind: QueueKind): Record<string, unknown> | undefined {
  if (kind.queueType !== 'quorum') return undefined;
  return { 'x-queue-type': 'quorum', ...(kind.deliveryLimit === undefined ? {} : { 'x-delivery-limit': kind.deliveryLimit }) };
}

/**
 * A quorum delay holding queue dead-letters its expired messages at least
 * once (RabbitMQ's default for quorum queues is at most once, which could
 * lose a delayed message across a leader change); that strategy requires the
 * `reject-publish` overflow.
 */
const QUORUM_DELAY_ARGUMENTS = { 'x-queue-type': 'quorum', 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };

/** A queue the binding declares before it publishes to it. */
export type QueueSpec =
  /** A work queue or a DLQ: durable, non-exclusive, non-auto-delete. */
  | { readonly kind: 'work'; readonly name: string }
  /** A delay holding queue: messages expire after `ttlMs` into `target` through the default exchange. */
  | { readonly kind: 'delay'; readonly name: string; readonly ttlMs: number; readonly target: string };

/** `orders` + 2000 ms → `orders.delay.2000`, the holding queue of one delay. */
export function delayQueueName(queue: string, delayMs: number): string {
  return `${queue}.delay.${delayMs}`;
}

/** The holding queue for a delay: the delay is rounded up to a whole millisecond. */
export function delayQueue(target: string, delayMs: number): QueueSpec {
  const ttlMs = Math.ceil(delayMs);
  return { kind: 'delay', name: delayQueueName(target, ttlMs), ttlMs, target };
}

/**
 * Declares queues once per connection. Declarations run one at a time on a
 * channel of their own, because a refused declaration (406) closes the channel
 * it ran on and must not take publishes or consumers down with it.
 */
export class QueueDeclarer {
  private readonly admin: ChannelSlot<Channel>;
  private readonly declared = new WeakMap<ChannelModel, Map<string, Promise<void>>>();
  /** The declarations that succeeded, per connection: what a publish may skip awaiting. */
  private readonly done = new WeakMap<ChannelModel, Set<string>>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(connection: ConnectionManager, private readonly logger: Logger, private readonly kind: QueueKind = { queueType: 'classic', deliveryLimit: undefined }) {
    this.admin = new ChannelSlot(connection, (model) => model.createChannel(), logger, 'declaration');
  }

  /** Declares `spec` on `model` unless it already was on this connection. */
  ensure(model: ChannelModel, spec: QueueSpec, wait: boolean): Promise<void> {
    let cache = this.declared.get(model);
    if (!cache) {
      cache = new Map();
      this.declared.set(model, cache);
    }
    const known = cache.get(spec.name);
    if (known) return known;
    const run = this.chain.then(() => this.declare(spec, wait));
    this.chain = run.catch(() => undefined);
    cache.set(spec.name, run);
    run.then(
      () => {
        if (cache.get(spec.name) !== run) return; // forgotten meanwhile
        let done = this.done.get(model);
        if (!done) {
          done = new Set();
          this.done.set(model, done);
        }
        done.add(spec.name);
      },
      () => cache.delete(spec.name),
    );
    return run;
  }

  /** True when `name` was declared on `model` and not forgotten since. */
  isDeclared(model: ChannelModel, name: string): boolean {
    return this.done.get(model)?.has(name) === true;
  }

  /** Forgets a declaration (the queue turned out to be gone), so the next use declares it again. */
  forget(model: ChannelModel | undefined, name: string): void {
    if (!model) return;
    this.declared.get(model)?.delete(name);
    this.done.get(model)?.delete(name);
  }

  private async declare(spec: QueueSpec, wait: boolean): Promise<void> {
    const channel = await this.admin.get(wait);
    if (spec.kind === 'delay') {
      await channel.assertQueue(spec.name, {
        durable: true,
        exclusive: false,
        autoDelete: false,
        arguments: {
          'x-message-ttl': spec.ttlMs,
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': spec.target,
          ...(this.kind.queueType === 'quorum' ? QUORUM_DELAY_ARGUMENTS : {}),
        },
      });
      return;
    }
    try {
      const args = workQueueArguments(this.kind);
      await channel.assertQueue(spec.name, { durable: true, exclusive: false, autoDelete: false, ...(args ? { arguments: args } : {}) });
    } catch (error) {
      if ((error as { code?: number }).code !== 406) throw error;
      // The queue exists with other arguments the user chose (a native DLX, a
      // quorum type, a length limit): use it as it is.
      this.logger.debug({ queue: spec.name }, 'queue exists with its own arguments; using it as declared');
      await (await this.admin.get(wait)).checkQueue(spec.name);
    }
  }
}
