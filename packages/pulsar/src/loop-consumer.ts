import type { ConsumerCommand } from './frames.js';

/** A message as either kind of consumer (WebSocket, binary protocol) hands it to the consume loop. */
export interface Received {
  /** The settlement handle: base64 of the message's MessageIdData. */
  readonly messageId: string;
  readonly body: Buffer;
  readonly properties: Readonly<Record<string, string>>;
  /** When the broker stored the message (ms since the epoch), if it said. */
  readonly publishTime: number | undefined;
  /** 0 on the first delivery; advanced by a negative acknowledgement on Shared and Key_Shared subscriptions. */
  readonly redeliveryCount: number;
}

/**
 * One consumer of a consume loop's subscription: a consumer WebSocket
 * (`ConsumerSocket`) or a binary-protocol consumer
 * (`BinaryConsumer`). It holds permits for its share of the loop's
 * concurrency and reopens itself when it drops; deliveries and their
 * settlement stay with the loop.
 */
export interface LoopConsumer {
  /** This consumer's share of the loop's concurrency. */
  readonly capacity: number;
  /** Permits granted on the current connection and not used yet. */
  outstanding: number;
  /** Deliveries taken from this consumer and not finished yet. */
  inFlight: number;
  /** The consumer name of the current (or last) subscription. */
  readonly name: string | undefined;
  /** The receiver queue the current subscription prefetches into (0: none). */
  readonly queueSize: number;
  /** When the current subscription opened or last carried a message (ms). */
  readonly lastActivity: number;
  /** Subscribed now. */
  readonly open: boolean;
  /**
   * Keeps the consumer subscribed until `stopping` aborts; resolves then,
   * leaving it open for the settlements still to come ({@link close} ends it).
   * Rejects only on a configuration failure before the first subscription.
   */
  run(stopping: AbortSignal): Promise<void>;
  /** Closes gently: what was sent before reaches the broker. */
  close(): Promise<void>;
  /** Tops the permits up to what the owner allows. */
  grant(): void;
  /** Sends a settlement or permit command; false when not subscribed. */
  command(command: ConsumerCommand): boolean;
  /** Drops the current connection (its consumer is gone); `run` subscribes again. */
  drop(): void;
}

/** What a consumer asks of the consume loop that owns it. */
export interface ConsumerOwner {
  /** How many more permits this consumer may hold now (its free slots, within the loop's drain budget). */
  wanted(consumer: LoopConsumer): number;
  /** A message arrived on this consumer (its permit is already counted off). */
  receive(consumer: LoopConsumer, message: Received): void;
  /** The receiver queue a consumer WebSocket asks for on its next open: 0 unless the loop must prefetch. */
  receiverQueueSize(consumer: LoopConsumer): number;
  /** The broker refused a zero receiver queue (a partitioned topic): prefetch from now on. */
  zeroQueueRefused(): void;
  /** This consumer is subscribed (a first open or a reconnect). */
  opened(consumer: LoopConsumer): void;
  /** This consumer dropped; it subscribes again after a backoff. */
  lost(consumer: LoopConsumer): void;
}
