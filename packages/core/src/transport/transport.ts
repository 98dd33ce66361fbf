import type { Decision } from '../settlement/decision.js';
import type { BindingRules } from '../settlement/binding-rules.js';
import { BabelQueueError, type BabelQueueErrorOptions } from '../runtime/errors.js';
import type { NativeCount } from '../retry/reconcile.js';

/**
 * Native metadata values a transport may carry beside the body (AMQP headers
 * are typed; Kafka, Pulsar and SQS values are strings).
 */
export type HeaderValue = string | number | boolean | null;

/** One message on its way to the broker. */
export interface OutgoingMessage {
  /** The canonical envelope bytes, sent exactly as given. */
  readonly body: Buffer;
  /** Logical queue (topic) name. */
  readonly queue: string;
  /** The fields of the envelope a binding projects onto native metadata. */
  readonly projection: EnvelopeProjection;
  /** Deliver no earlier than this many milliseconds from now (0 or absent: now). */
  readonly delayMs?: number;
  /** Out-of-band riders (traceparent, tracestate, bq-replay-bypass); never part of the body. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Kafka record key, carried byte-for-byte (null stays null); on an SQS FIFO queue the `MessageGroupId` (UTF-8). Ignored elsewhere. */
  readonly key?: Buffer | null;
}

/** The envelope fields every binding's native projection is built from. */
export interface EnvelopeProjection {
  readonly urn: string;
  readonly traceId: string;
  readonly messageId: string;
  readonly schemaVersion: number;
  readonly lang: string;
  readonly createdAt: number;
  readonly attempts: number;
}

/**
 * One reserved message, as the broker handed it over. The runtime decides its
 * fate with the settlement policy and calls `settle` exactly once.
 */
export interface Delivery {
  /** The body bytes exactly as the broker delivered them. */
  readonly body: Buffer;
  /** The logical queue the delivery was consumed from (the DLQ is named from it). */
  readonly queue: string;
  /** Native metadata as received (for riders such as traceparent, and for users). */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /**
   * The native schema-version value when the binding has a version gate: the
   * raw value read by the core's `nativeSchemaVersion` (text, never trimmed;
   * undefined when absent, null or blank). The runtime's `isVersionGated` gates
   * every value other than exactly "1".
   */
  readonly nativeSchemaVersion?: string;
  /**
   * Set when the transport already knows the body is poison before the core
   * looks at it (Redis zset: the reserve script could not decode the job).
   * The text says why; the body is still kept for the poison record.
   */
  readonly poison?: string;
  /** The record key where the broker has keys (Kafka), byte-for-byte; every re-publish carries it. */
  readonly key?: Buffer | null;
  /**
   * True when the broker delivered a null value, not an empty one (a Kafka
   * tombstone); `body` is then empty. A write-back of the record (a redrive
   * restore) passes it to `publishRaw` so that null stays null.
   */
  readonly nullValue?: boolean;
  /**
   * The broker's own delivery counter as it reported it (the field the
   * binding's `BindingRules.attempts` names), undefined where the broker keeps
   * none. The runtime reconciles it with the body's count by that formula.
   */
  readonly nativeAttempts?: NativeCount;
  /**
   * Executes a decision. A `dead-letter` decision must write the record first and
   * settle only after the write succeeded; if the write fails it must leave the
   * delivery unsettled and throw {@link DeadLetterWriteError}.
   */
  settle(decision: Decision): Promise<void>;
}

/**
 * How one message of {@link Transport.publishMany} ended, in the order the
 * messages were given. `messageId` is the message's `meta.id`. A failed message
 * carries the reason; whether the broker may still have it (a batch that failed
 * after part of it was written) is for the error to say.
 */
export type PublishOutcome =
  | { readonly ok: true; readonly messageId: string }
  | { readonly ok: false; readonly messageId: string; readonly error: Error };

/** Options of {@link Transport.publishRaw}. */
export interface RawPublishOptions {
  /** Kafka record key, carried byte-for-byte (null stays null); on an SQS FIFO queue the `MessageGroupId` (UTF-8). Ignored elsewhere. */
  readonly key?: Buffer | null;
  /** Kafka: write a null value (a tombstone) instead of `body`, which must then be empty. Ignored elsewhere. */
  readonly nullValue?: boolean;
}

/** Options of {@link Transport.scan}. */
export interface ScanOptions {
  /** Skip this many records from the head first. Default 0. */
  readonly offset?: number;
  /** Aborting ends the scan (the iteration finishes early, resources released). */
  readonly signal?: AbortSignal;
  /**
   * Read even where reading counts a delivery of every record read (a
   * RabbitMQ quorum queue: no peek, so a read takes and puts back, and at the
   * queue's delivery limit the broker drops or dead-letters the record).
   * Without it such a binding throws `CountedReadError` before it reads.
   */
  readonly allowCountedReads?: boolean;
}

/** Options of {@link Transport.browse}. */
export interface BrowseOptions {
  /** As {@link ScanOptions.allowCountedReads}. */
  readonly allowCountedReads?: boolean;
}

/** One waiting record read by {@link Transport.scan}; reading it changed nothing on the broker. */
export interface ScannedRecord {
  /** The body bytes as stored (for the Redis legacy layout: the envelope inside its frame). */
  readonly body: Buffer;
  /** Native metadata where the broker keeps it beside the body; `{}` where it has none. */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** The record key where the broker has keys (Kafka), byte for byte; undefined elsewhere. */
  readonly key?: Buffer | null;
  /** 0-based position from the head of the queue when the scan read it. */
  readonly index: number;
  /** The broker's own address of the record for people (`partition 0, offset 1042`); undefined where `index` says it all. */
  readonly location?: string;
  /**
   * Where the broker shows it: the record is locked by a receiver (a Service
   * Bus peek-lock) until this time, ms UTC; no one else can take it before.
   */
  readonly lockedUntil?: number;
}

/** What a transport can and cannot do; the runtime refuses what is missing. */
export interface TransportCapabilities {
  /** Delayed publish is supported. */
  readonly delayedPublish: boolean;
  /** A retry can wait (release with delay / backoff). */
  readonly delayedRetry: boolean;
  /**
   * A failed delivery can be retried at all. False for Kafka without retry
   * tiers: a failing handler then leaves the record uncommitted (the transport
   * raises) and poison is committed, dropped and logged.
   */
  readonly retry: boolean;
  /**
   * Native metadata travels beside the body, so riders (traceparent,
   * tracestate) and the replay-bypass header reach the consumer. False on the
   * Redis zset layout, which has no place for them (the spec forbids a frame).
   */
  readonly headers: boolean;
  /**
   * How {@link Transport.scan} reads, where the binding has it: `peek` reads
   * without touching a record (absent means `peek`); `leased` receives each
   * record under a short lease and gives it back when the scan ends (SQS,
   * RabbitMQ): meanwhile consumers and other readers do not see it, and the
   * broker may count the read as a delivery.
   */
  readonly scan?: ScanKind;
}

/** How a binding's {@link Transport.scan} reads; see {@link TransportCapabilities.scan}. */
export type ScanKind = 'peek' | 'leased';

/** Options of {@link Transport.connect}. */
export interface ConnectOptions {
  /** Give up with a {@link ConnectError} once this many milliseconds have passed. */
  readonly timeoutMs: number;
  /** Aborting gives up at once (shutdown during start-up). */
  readonly signal?: AbortSignal;
  /**
   * The queue the caller is about to consume, when it is: a transport that
   * must look a queue up (SQS) may do so here, so a missing queue fails the
   * start before the worker says it is consuming.
   */
  readonly queue?: string;
}

/** Options for one consume loop. */
export interface ConsumeOptions {
  /** Deliveries handled at once (>= 1). */
  readonly concurrency: number;
  /** Aborting stops taking work; in-flight deliveries finish and settle first. */
  readonly signal: AbortSignal;
  /** Stop after this many deliveries were handed over (drain mode). */
  readonly maxMessages?: number;
  /**
   * Stop once no delivery arrived for this long (drain mode). Counted once the
   * binding consumes: the time it takes to subscribe, attach its link or join
   * its group, or to reconnect, does not count.
   */
  readonly idleMs?: number;
  /**
   * Take deliveries in the order the broker holds them, as one consumer would.
   * Set by a tool that stops at a chosen record (`drainQueue`: a
   * redrive's take-up-to); a binding that spreads one loop over several
   * consumers (Pulsar's consumer sockets) uses a single one then.
   */
  readonly inOrder?: boolean;
  /**
   * Whether the runtime writes what it gives up on to a dead-letter queue on
   * this consume. The App sets it from its configuration; absent when a tool
   * consumes (redrive). A binding may use it for start-up advice (SQS: a queue
   * without a RedrivePolicy).
   */
  readonly deadLettering?: boolean;
  /**
   * The App's attempt cap on this queue (0 = no cap); absent when a tool
   * consumes. A binding whose broker drops a message after its own delivery
   * limit checks it against this at start-up (RabbitMQ quorum queues).
   */
  readonly maxAttempts?: number;
}

/**
 * The contract every broker binding implements. Transports are thin: they move
 * bytes with native metadata and execute settlement decisions; every consume
 * rule of the specification lives in the core's settlement policy.
 */
export interface Transport {
  /** The binding's name and settlement rules, as the specification states them. */
  readonly rules: BindingRules;
  readonly capabilities: TransportCapabilities;
  /** Where the transport connects, credentials masked, for log lines (e.g. `redis://127.0.0.1:6379 (zset layout)`). */
  readonly target: string;
  /**
   * Connects, or verifies the connection, before a worker says it is consuming.
   * An unreachable broker, an unknown host or refused credentials reject with a
   * {@link ConnectError} within `timeoutMs`; nothing is retried silently. After
   * a successful connect, reconnection stays the transport's business.
   * Idempotent: a connected transport resolves at once.
   */
  connect(options: ConnectOptions): Promise<void>;
  /**
   * Whether the connection to the broker is up now, for health probes
   * (`App.health()`): false before `connect`, while the client library
   * reconnects, and after `close`. A stateless HTTP binding (SQS) reports
   * whether its last call reached the broker. Optional: without it the App
   * counts a consuming worker as connected.
   */
  readonly connected?: boolean;
  /**
   * How many deliveries of `queue` wait ready for this consumer now (not held
   * by any consumer, not delayed), for the App's stalled check. Optional: a
   * binding implements it only where the count is cheap and excludes what
   * other consumers hold or are assigned (not a consumer group's lag, not a
   * browse of the whole queue).
   */
  readyCount?(queue: string): Promise<number>;
  /**
   * How long a delivery of `queue` stays reserved before the broker may hand it
   * to another consumer, in ms; undefined when it stays reserved until it is
   * settled or the connection drops. A transport renews the reservation while a
   * delivery is unsettled where the broker allows (see `ReservationKeeper`);
   * the App refuses a handler timeout that is not below it.
   */
  reservationMs?(queue: string): number | undefined;
  /** Publishes one message; resolves once the broker has it (confirmed where the broker can confirm). */
  publish(message: OutgoingMessage): Promise<void>;
  /**
   * Publishes many messages with the broker's own batching (one pipeline, a
   * confirm window, one produce request, `SendMessageBatch`, …); each message
   * is sent exactly as {@link publish} would send it (same bytes, metadata,
   * delay and riders). Resolves once every message is settled with one
   * {@link PublishOutcome} per message, in the order given, and never rejects
   * for one message: a message the broker refused, or one of a batch that
   * failed as a whole, is `ok: false`. Rejecting means no message was sent
   * (the transport is closed). Optional: the App falls back to concurrent
   * `publish` calls.
   */
  publishMany?(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]>;
  /** Writes a dead-letter or raw record to a queue (used by redrive and tools), with the key where the broker has one. */
  publishRaw?(queue: string, body: Buffer, headers?: Readonly<Record<string, string>>, options?: RawPublishOptions): Promise<void>;
  /**
   * Reads up to `max` bodies from the head of `queue` without consuming them.
   *
   * @deprecated Folded into {@link scan} (with {@link TransportCapabilities.scan}
   * saying `peek` or `leased`); the CLI and the console read through the core's
   * dead-letter reader, which uses `scan` only. Kept for callers of 0.x.
   */
  browse?(queue: string, max: number, options?: BrowseOptions): Promise<Buffer[]>;
  /** Removes every waiting message of `queue`; resolves with how many (DLQ purge). Optional. */
  purge?(queue: string): Promise<number>;
  /**
   * Reads the waiting records of `queue` from its head, oldest first, skipping
   * the first `offset`, without consuming or changing them (the DLQ console's
   * pages and searches). The transport reads in batches, so a caller that keeps
   * only what it needs holds one batch in memory however long the queue is;
   * ending the iteration early (`break`, `return`) releases whatever the scan
   * holds. A queue that does not exist reads as empty. Optional; each binding
   * documents how it reads without consuming (Redis: `LRANGE` windows;
   * RabbitMQ: a basic.get window held unacknowledged on its own channel and
   * released when the scan ends; Kafka: a separate consumer that seeks and never
   * commits; Pulsar: the admin API's peek; Artemis: a browsing receiver; Service
   * Bus: `peekMessages`; SQS: leased receives, given back when the scan ends,
   * declared `leased` in {@link TransportCapabilities.scan}).
   * A binding whose read would count a delivery of each record (RabbitMQ
   * quorum queues) refuses with `CountedReadError` unless
   * `allowCountedReads` is set. Implement {@link depth} beside it.
   */
  scan?(queue: string, options?: ScanOptions): AsyncIterable<ScannedRecord>;
  /**
   * How many records wait on `queue` now, as {@link scan} would count them
   * (a queue that does not exist: 0). Optional; where the broker can only
   * estimate, the binding says so.
   */
  depth?(queue: string): Promise<number>;
  /**
   * The names of the queues the broker holds now, as the binding names queues
   * (a Kafka topic, an SQS queue's name, a Redis list's queue name), in no
   * particular order. Optional: only brokers that can list their queues
   * implement it (the DLQ console discovers every DLQ with it; RabbitMQ over
   * AMQP 0-9-1, Artemis and Service Bus data-plane clients cannot list).
   */
  listQueues?(): Promise<string[]>;
  /**
   * Removes one waiting record of `queue` whose body is `body` byte for byte;
   * resolves true if one was removed, false if none was there (already taken).
   * Optional: only brokers that can delete one record in place implement it
   * (Redis lists: `LREM`; SQS: by the receipt handle of a leased receive); tools
   * fall back to take-and-restore elsewhere.
   */
  remove?(queue: string, body: Buffer): Promise<boolean>;
  /**
   * Hands deliveries of `queue` to `onDelivery` with at most `concurrency` in
   * flight, until the signal aborts (or the drain limits are reached). Resolves
   * after every in-flight `onDelivery` has settled.
   */
  consume(queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void>;
  /**
   * Releases connections and stops running consume loops (their in-flight
   * deliveries settle first). Terminal: a second call is a no-op, and publish
   * or consume afterwards rejects with {@link TransportClosedError}; make a new
   * transport to start again.
   */
  close(): Promise<void>;
}

/** Thrown by `Delivery.settle` when the dead-letter write failed; the delivery is left unsettled. */
export class DeadLetterWriteError extends BabelQueueError {
  override readonly name = 'DeadLetterWriteError';
  constructor(readonly queue: string, options?: BabelQueueErrorOptions) {
    super(`dead-letter write to "${queue}" failed; the message is left unsettled for redelivery`, options);
  }
}

/** Thrown by a transport's publish and consume calls after `close()`: a closed transport never reopens. */
export class TransportClosedError extends Error {
  override readonly name = 'TransportClosedError';
  constructor(readonly binding: string) {
    super(`the ${binding} transport is closed`);
  }
}
