import type { Channel, Message } from 'amqplib';

/** Not settled: no ack may cover it. */
const OPEN = 0;
/** Settled as an ack; the ack is not sent yet. */
const ACKED = 1;
/** Its ack, nack or reject has been sent (or its channel is gone): no longer outstanding. */
const SENT = 2;

/** One delivery's place in its channel's {@link Acker}. */
export interface AckTicket {
  readonly message: Message;
  state: typeof OPEN | typeof ACKED | typeof SENT;
}

/** The channel an acker sends on, and whether it is still open. */
export interface AckLane {
  readonly channel: Channel;
  readonly closed: boolean;
}

/**
 * Acknowledges the deliveries of one channel, coalescing acks with AMQP's
 * `multiple` flag. An ack waits at most one turn of the event loop; then the
 * acks whose tags are below the oldest delivery still open (being handled, or
 * waiting for its delayed requeue) go out as one `basic.ack` with `multiple`
 * on the highest of them, and the acks above it go out one by one in the same
 * turn, so a slow handler never holds the others' prefetch slots.
 *
 * Why a `multiple` ack never covers an open delivery: every delivery of the
 * channel is tracked here in the order it arrived (lowest tag first), before
 * any later one, and the ack stops below the oldest open one. What it covers
 * below that is acked now or no longer outstanding (nacked or acked before),
 * which RabbitMQ skips. Each delivery is settled exactly once. A channel that
 * closed with acks pending sends nothing: RabbitMQ redelivers those messages
 * (at-least-once).
 */
export class Acker {
  /** Tracked deliveries, oldest first from `head` on; the settled ones are skipped and compacted away. */
  private tracked: AckTicket[] = [];
  private head = 0;
  /** How many tracked deliveries are still open. */
  private open = 0;
  /** Acks settled since the last flush. */
  private pending: AckTicket[] = [];
  private scheduled = false;
  /** False once a tag arrived out of order (not expected): every ack then goes alone. */
  private ordered = true;
  private lastTag = -1;
  private readonly flushSoon = () => this.flush();

  constructor(
    private readonly lane: AckLane,
    private readonly onError: (what: string, error: unknown) => void,
  ) {}

  /** Registers a delivery of this channel; call it as each delivery arrives, in order, before any later one. */
  track(message: Message): AckTicket {
    const tag = message.fields.deliveryTag;
    if (tag <= this.lastTag) this.ordered = false;
    this.lastTag = tag;
    const ticket: AckTicket = { message, state: OPEN };
    this.tracked.push(ticket);
    this.open += 1;
    // Bounded by the open deliveries (the prefetch window), even behind one that never settles.
    if (this.tracked.length - this.head > 2 * this.open + 1024) this.compact();
    return ticket;
  }

  /** Settles the delivery as an ack; the ack goes out by the next turn of the event loop (or at {@link flush}). */
  ack(ticket: AckTicket): void {
    if (ticket.state !== OPEN) return;
    ticket.state = ACKED;
    this.open -= 1;
    this.pending.push(ticket);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  /** Sends a nack for the delivery now, on its own: `requeue` puts it back, otherwise it is rejected. */
  nack(ticket: AckTicket, requeue: boolean): void {
    if (ticket.state !== OPEN) return;
    ticket.state = SENT;
    this.open -= 1;
    this.send(requeue ? 'requeue' : 'reject', ticket.message, false);
  }

  /** Sends every pending ack now: one `multiple` ack for those below the oldest open delivery, the rest alone. */
  flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    const floor = this.ordered ? this.oldestOpenTag() : -1;
    let top: AckTicket | undefined;
    let covered = 0;
    for (const ticket of pending) {
      if (ticket.message.fields.deliveryTag < floor) {
        covered += 1;
        if (top === undefined || ticket.message.fields.deliveryTag > top.message.fields.deliveryTag) top = ticket;
      }
    }
    if (top !== undefined) this.send('ack', top.message, covered > 1);
    for (const ticket of pending) {
      if (ticket.message.fields.deliveryTag >= floor) this.send('ack', ticket.message, false);
      ticket.state = SENT;
    }
  }

  /** The tag of the oldest delivery still open (Infinity when none is). */
  private oldestOpenTag(): number {
    const tracked = this.tracked;
    while (this.head < tracked.length && tracked[this.head]!.state !== OPEN) this.head += 1;
    if (this.head === tracked.length) {
      this.tracked = [];
      this.head = 0;
      return Infinity;
    }
    return tracked[this.head]!.message.fields.deliveryTag;
  }

  /** Keeps only the open deliveries (their order unchanged). */
  private compact(): void {
    const open: AckTicket[] = [];
    for (let i = this.head; i < this.tracked.length; i++) if (this.tracked[i]!.state === OPEN) open.push(this.tracked[i]!);
    this.tracked = open;
    this.head = 0;
  }

  /** A channel that closed took its deliveries' settlements with it: RabbitMQ redelivers them. */
  private send(what: 'ack' | 'reject' | 'requeue', message: Message, multiple: boolean): void {
    if (this.lane.closed) return;
    try {
      if (what === 'ack') this.lane.channel.ack(message, multiple);
      else this.lane.channel.nack(message, false, what === 'requeue');
    } catch (error) {
      this.onError(what, error);
    }
  }
}
