import type { Connection, Delivery as AmqpDelivery, EventContext, Message as AmqpMessage, Sender } from 'rhea';
import type { Logger } from '@babelqueue/core';
import type { ConnectionManager } from './connection.js';
import { BROKER, BrokerUnavailableError, PublishNotConfirmedError, TransportClosedError } from './errors.js';

/** A send waiting for its outcome: settled with undefined once accepted, else with the reason. */
interface Pending {
  settle(error: Error | undefined): void;
}

interface Slot {
  readonly sender: Sender;
  readonly pending: Map<AmqpDelivery, Pending>;
}

/**
 * Sends messages on one sending link per address (an anycast queue, attached
 * with the `queue` capability, so Artemis auto-creates it as ANYCAST), and
 * resolves each send only once the broker settled it `accepted`: a resolved
 * publish is on the broker. `rejected`, `released`, `modified`, a refused link
 * or a connection lost before the outcome reject the send.
 */
export class Publisher {
  private readonly slots = new Map<string, Slot>();
  private readonly watched = new WeakSet<Connection>();

  constructor(
    private readonly connection: ConnectionManager,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Sends `message` to `queue` (a batch of one, see {@link sendMany}). With
   * `wait`, a connection outage is waited out and a send whose outcome was
   * lost with the connection is sent again (at-least-once).
   */
  async send(queue: string, message: AmqpMessage, wait: boolean): Promise<void> {
    const [failure] = await this.sendMany([queue], [message], wait);
    if (failure !== undefined) throw failure;
  }

  /**
   * Sends a batch: every message on its queue's link before any outcome is
   * awaited, then resolves with each one's failure in order (undefined where
   * the broker accepted it). One timer bounds the batch's wait for outcomes
   * (the sends start together). With `wait`, the sends whose outcome was lost
   * with the connection are sent again after the reconnect.
   */
  async sendMany(queues: readonly string[], messages: readonly AmqpMessage[], wait: boolean): Promise<(Error | undefined)[]> {
    const failures = new Array<Error | undefined>(messages.length).fill(undefined);
    let round = messages.map((_, index) => index);
    for (;;) {
      await this.sendBatchOnce(queues, messages, round, failures, wait);
      if (!wait || this.connection.terminal()) return failures;
      const lost = round.filter((index) => isConnectionLoss(failures[index]));
      if (lost.length === 0) return failures;
      this.logger.warn({ queue: queues[lost[0]!], count: lost.length }, 'publishes lost with the connection; sending them again after the reconnect');
      for (const index of lost) failures[index] = undefined;
      round = lost;
    }
  }

  private async sendBatchOnce(
    queues: readonly string[],
    messages: readonly AmqpMessage[],
    indexes: readonly number[],
    failures: (Error | undefined)[],
    wait: boolean,
  ): Promise<void> {
    let connection: Connection;
    try {
      connection = await this.connection.open(wait);
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error));
      for (const index of indexes) failures[index] = reason;
      return;
    }
    const batch = new BatchSends(failures, indexes.length);
    // The link each send went out on: a link replaced mid-batch leaves earlier sends on the old one.
    const sentOn = new Map<number, Slot>();
    for (const index of indexes) {
      const queue = queues[index]!;
      const slot = this.slot(connection, queue);
      sentOn.set(index, slot);
      try {
        slot.pending.set(slot.sender.send(messages[index]!), new BatchSend(batch, index));
      } catch (cause) {
        batch.settle(index, new PublishNotConfirmedError(BROKER, queue, 'the message could not be encoded', { cause }));
      }
    }
    if (batch.done()) return;
    // Artemis gives a full address (address-full policy FAIL or BLOCK) no credit: without a bound the
    // sends would wait forever. A queue whose sends got no outcome in time loses its link, so nothing
    // is sent late, and its waiting sends fail (one already sent may or may not be on the queue).
    const timer = setTimeout(() => {
      for (const index of indexes) {
        if (batch.settled(index)) continue;
        const queue = queues[index]!;
        const slot = sentOn.get(index)!;
        this.drop(queue, slot, new PublishNotConfirmedError(BROKER, queue, `no outcome within ${this.timeoutMs} ms (no credit: is the address full?)`));
        slot.sender.close();
      }
    }, this.timeoutMs);
    try {
      await batch.finished;
    } finally {
      clearTimeout(timer);
    }
  }

  private slot(connection: Connection, queue: string): Slot {
    this.watch(connection);
    const found = this.slots.get(queue);
    if (found && found.sender.connection === connection && !found.sender.is_closed()) return found;
    const sender = connection.open_sender({ target: { address: queue, capabilities: ['queue'] }, autosettle: true });
    const slot: Slot = { sender, pending: new Map() };
    const settle = (context: EventContext, outcome: 'accepted' | 'rejected' | 'released') => {
      const delivery = context.delivery;
      if (delivery === undefined) return;
      const pending = slot.pending.get(delivery);
      if (pending === undefined) return;
      slot.pending.delete(delivery);
      pending.settle(outcome === 'accepted' ? undefined : new PublishNotConfirmedError(BROKER, queue, describeOutcome(outcome, delivery)));
    };
    sender.on('accepted', (context: EventContext) => settle(context, 'accepted'));
    sender.on('rejected', (context: EventContext) => settle(context, 'rejected'));
    // rhea reports `modified` as `released` (treat_modified_as_released).
    sender.on('released', (context: EventContext) => settle(context, 'released'));
    sender.on('sender_error', (context: EventContext) => {
      const error = context.sender?.error as { condition?: string; description?: string } | undefined;
      this.logger.warn({ queue, error: [error?.condition, error?.description].filter(Boolean).join(': ') }, 'Artemis closed the sending link');
    });
    sender.on('sender_close', (context: EventContext) => {
      const error = context.sender?.error as { condition?: string; description?: string } | undefined;
      const why = error ? `the broker refused the link (${[error.condition, error.description].filter(Boolean).join(': ')})` : 'the sending link closed';
      this.drop(queue, slot, new PublishNotConfirmedError(BROKER, queue, why));
    });
    this.slots.set(queue, slot);
    return slot;
  }

  /** A lost connection fails every send still waiting for its outcome on it. */
  private watch(connection: Connection): void {
    if (this.watched.has(connection)) return;
    this.watched.add(connection);
    void this.connection.lost(connection).then(() => {
      const error = new BrokerUnavailableError(BROKER, 'the connection was lost before the broker settled the publish; it may or may not be on the queue');
      for (const [queue, slot] of this.slots) {
        if (slot.sender.connection === connection) this.drop(queue, slot, error);
      }
    });
  }

  private drop(queue: string, slot: Slot, error: Error): void {
    if (this.slots.get(queue) === slot) this.slots.delete(queue);
    const pending = [...slot.pending.values()];
    slot.pending.clear();
    for (const entry of pending) entry.settle(error);
  }

  /** Fails every send still waiting (the transport is closing). */
  close(): void {
    for (const [queue, slot] of this.slots) this.drop(queue, slot, new TransportClosedError(BROKER));
  }
}

/** The sends of one batch still waiting for their outcome; `finished` resolves once none is. */
class BatchSends {
  readonly finished: Promise<void>;
  private waiting: number;
  private readonly outcomes: Uint8Array;
  private resolve!: () => void;

  constructor(
    private readonly failures: (Error | undefined)[],
    count: number,
  ) {
    this.waiting = count;
    this.outcomes = new Uint8Array(failures.length);
    this.finished = new Promise<void>((resolve) => (this.resolve = resolve));
  }

  settle(index: number, error: Error | undefined): void {
    if (this.outcomes[index] === 1) return;
    this.outcomes[index] = 1;
    this.failures[index] = error;
    if (--this.waiting === 0) this.resolve();
  }

  settled(index: number): boolean {
    return this.outcomes[index] === 1;
  }

  done(): boolean {
    return this.waiting === 0;
  }
}

/** One send of a batch, as its link's pending map holds it. */
class BatchSend implements Pending {
  constructor(
    private readonly batch: BatchSends,
    private readonly index: number,
  ) {}

  settle(error: Error | undefined): void {
    this.batch.settle(this.index, error);
  }
}

function describeOutcome(outcome: 'rejected' | 'released', delivery: AmqpDelivery): string {
  const state = delivery.remote_state as { error?: { condition?: string; description?: string } } | undefined;
  const error = state?.error;
  const detail = error ? ` (${[error.condition, error.description].filter(Boolean).join(': ')})` : '';
  return outcome === 'rejected' ? `the broker rejected it${detail}` : `the broker released it without taking it${detail}`;
}

/** A failure that a reconnect cures (the publish itself was fine). */
function isConnectionLoss(error: unknown): boolean {
  if (error instanceof TransportClosedError) return false;
  return error instanceof BrokerUnavailableError;
}
