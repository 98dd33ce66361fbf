import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import type { Logger } from '@babelqueue/core';
import { isConfigurationFailure, type PulsarConnection } from './connection.js';
import { PulsarRefusedError } from './errors.js';
import { sendFrame } from './frame-send.js';
import { parseFrame, type ConsumerCommand, type ConsumerMessage } from './frames.js';
import { keepSubscribed } from './keep-subscribed.js';
import type { ConsumerOwner, LoopConsumer, Received } from './loop-consumer.js';
import type { ResolvedOptions } from './options.js';

/** Pulsar's answer when a zero receiver queue meets a partitioned topic (a multi-topics consumer). */
const ZERO_QUEUE_REFUSED = /receiver queue size needs to be greater than 0/i;

/**
 * One consumer WebSocket of a consume loop, reopened with backoff whenever it
 * drops. Each open subscribes a consumer under a fresh `consumerName`, so the
 * loop can ask the broker whether the consumer behind a silent socket still
 * exists. The socket holds permits (pull mode) for its share of the loop's
 * concurrency; deliveries and their settlement stay with the loop.
 */
export class ConsumerSocket implements LoopConsumer {
  /** Permits granted on the current socket and not yet used. */
  outstanding = 0;
  /** Deliveries taken from this socket and not finished yet. */
  inFlight = 0;
  /** The consumer name of the current (or last) open. */
  name: string | undefined;
  /** The receiver queue the current socket was opened with. */
  queueSize = 0;
  /** When the current socket opened or last carried a message (ms). */
  lastActivity = 0;
  private ws: WebSocket | undefined;

  constructor(
    private readonly connection: PulsarConnection,
    private readonly options: ResolvedOptions,
    private readonly logger: Logger,
    private readonly queue: string,
    private readonly path: string,
    /** This socket's share of the loop's concurrency. */
    readonly capacity: number,
    private readonly owner: ConsumerOwner,
  ) {}

  /** Open now. */
  get open(): boolean {
    return this.ws !== undefined && this.ws.readyState === WebSocket.OPEN;
  }

  /**
   * Keeps a socket open until `stopping` aborts; resolves then, leaving the
   * socket open for the settlements still to come ({@link close} ends it).
   * Rejects only on a configuration failure before the first open (refused
   * credentials, a certificate that does not verify).
   */
  async run(stopping: AbortSignal): Promise<void> {
    await keepSubscribed(this, this.owner, {
      open: () => this.openOne(),
      refused: (error, connectedBefore) => {
        if (!connectedBefore && isConfigurationFailure(error)) throw error;
        if (error instanceof PulsarRefusedError && ZERO_QUEUE_REFUSED.test(error.message) && this.queueSize === 0) {
          this.owner.zeroQueueRefused();
          return true;
        }
        return false;
      },
      attach: (ws) => this.attach(ws),
      detach: () => {
        this.ws = undefined;
      },
      // Closed once open rather than dropped mid-handshake, which can leave
      // the broker's WebSocket service a consumer no socket owns (apache/pulsar#4098).
      discard: (late) => void closeGently(late),
    }, stopping, { logger: this.logger, queue: this.queue, reconnect: this.options.reconnect, what: 'Pulsar consumer WebSocket' });
  }

  /** Closes the socket gently, so commands sent before it reach the broker. */
  async close(): Promise<void> {
    const ws = this.ws;
    this.ws = undefined;
    await closeGently(ws);
  }

  /** Tops the permits up to what the owner allows. */
  grant(): void {
    const want = this.owner.wanted(this) - this.outstanding;
    if (want <= 0) return;
    if (this.command({ type: 'permit', permitMessages: want })) this.outstanding += want;
  }

  /** Sends a command on the current socket; false when none is open. */
  command(command: ConsumerCommand): boolean {
    const ws = this.ws;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) return false;
    sendFrame(ws, JSON.stringify(command));
    return true;
  }

  /** Drops the current socket (its consumer is gone); the run loop opens another. */
  drop(): void {
    this.ws?.terminate();
  }

  private openOne(): Promise<WebSocket> {
    this.queueSize = this.owner.receiverQueueSize(this);
    this.name = `babelqueue-${randomBytes(6).toString('hex')}`;
    const { options } = this;
    return this.connection.openSocket(this.path, {
      subscriptionType: options.subscriptionType,
      subscriptionInitialPosition: options.initialPosition === 'earliest' ? 'Earliest' : 'Latest',
      pullMode: 'true',
      receiverQueueSize: String(this.queueSize),
      consumerName: this.name,
      negativeAckRedeliveryDelay: String(options.negativeAckRedeliveryDelayMs),
    });
  }

  /** Binds a fresh socket: frames go to the owner, and the first permits go out. Resolves when it closes. */
  private attach(ws: WebSocket): Promise<void> {
    this.ws = ws;
    this.outstanding = 0;
    this.lastActivity = Date.now();
    ws.on('message', (data) => {
      const frame = parseFrame(data) as Partial<ConsumerMessage> | undefined;
      if (frame === undefined || typeof frame.messageId !== 'string' || typeof frame.payload !== 'string') {
        this.logger.warn({ queue: this.queue }, 'ignored a frame from the Pulsar consumer WebSocket that is not a message');
        return;
      }
      this.outstanding = Math.max(0, this.outstanding - 1);
      this.lastActivity = Date.now();
      this.owner.receive(this, received(frame as ConsumerMessage));
    });
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    this.grant();
    return closed;
  }
}

/** A WebSocket message frame as the loop takes it: payload decoded, publish time parsed. */
function received(frame: ConsumerMessage): Received {
  const stored = frame.publishTime === undefined ? Number.NaN : Date.parse(frame.publishTime);
  return {
    messageId: frame.messageId,
    body: Buffer.from(frame.payload, 'base64'),
    properties: frame.properties ?? {},
    publishTime: Number.isFinite(stored) ? stored : undefined,
    redeliveryCount: typeof frame.redeliveryCount === 'number' ? frame.redeliveryCount : 0,
  };
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
