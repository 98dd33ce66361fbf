import type { ConnectionOptions as TlsOptions } from 'node:tls';
import {
  ConfigurationError,
  resolveReconnectBackoff,
  type Logger,
  type ReconnectBackoff,
  type ResolvedReconnectBackoff,
} from '@babelqueue/core';

/**
 * Reconnect backoff: delay before attempt n is `min(maxDelayMs, initialDelayMs × multiplier^(n−1))`;
 * defaults 100 ms, 5000 ms and 2 (the core's {@link ReconnectBackoff}).
 */
export type ReconnectOptions = ReconnectBackoff;

/** Idle backoff of the `basic.get` mode: after an empty get, wait `minMs`, doubling up to `maxMs`. */
export interface PollOptions {
  /** Default 50 ms. */
  readonly minMs?: number;
  /** Default 1000 ms. */
  readonly maxMs?: number;
}

/** Options of {@link RabbitMqTransport}. */
export interface RabbitMqTransportOptions {
  /**
   * `amqp://user:password@host:5672/vhost` or `amqps://…` (TLS). Credentials come
   * from the URL and are never logged; amqplib query parameters (`heartbeat`,
   * `frameMax`, `channelMax`, `locale`) pass through.
   */
  readonly url: string;
  /**
   * `consume` (default): `basic.consume` with prefetch = concurrency, for throughput.
   * `get`: the specification's documented `basic.get` polling. Settlement is identical.
   */
  readonly mode?: 'consume' | 'get';
  /**
   * Publisher confirms (default true): `publish` resolves only once the broker
   * confirmed the message. Retry re-publishes and dead-letter writes are always
   * confirmed, whatever this says.
   */
  readonly confirm?: boolean;
  /** Prefetch of the consume mode; defaults to the consume loop's concurrency. */
  readonly prefetch?: number;
  /** Reconnect backoff after a lost connection. */
  readonly reconnect?: ReconnectOptions;
  /**
   * What `publish` does while the connection is down: `fail` (default) rejects at
   * once with {@link BrokerUnavailableError}; `wait` waits for the reconnect and
   * re-sends a publish whose confirm was lost with the connection (the message
   * may then arrive twice: at-least-once).
   */
  readonly publishWhileDisconnected?: 'fail' | 'wait';
  /** Idle backoff of the `get` mode. */
  readonly poll?: PollOptions;
  /**
   * How long an unsettled delivery (a failed dead-letter write, an `unsettled`
   * decision, a failed retry re-publish) is held before it is requeued, so a
   * broker-side fault does not turn into a hot redelivery loop. Default 1000 ms.
   */
  readonly requeueDelayMs?: number;
  /**
   * The most messages one {@link RabbitMqTransport.scan} holds at once. AMQP
   * 0-9-1 has no peek: a scan takes messages with `basic.get` (no ack) on a
   * channel of its own and releases them all, in place, when it ends, so every
   * message read so far stays held until then. The scan stops at this many.
   * Default 10000.
   */
  readonly scanWindow?: number;
  /** TLS options for `amqps://` (ca, cert, key, servername, rejectUnauthorized, …). */
  readonly tls?: TlsOptions;
  /** Shown as the connection's name in the RabbitMQ management UI. */
  readonly connectionName?: string;
  /**
   * How long one connection attempt may stay silent, from the TCP connect to
   * the end of the AMQP handshake, before it is abandoned and tried again with
   * the reconnect backoff, in ms. A broker that takes the socket and never
   * answers (one still starting) would otherwise hold the attempt, and every
   * publish waiting on it, for good. Default 10000.
   */
  readonly connectTimeoutMs?: number;
  /**
   * The type of the queues this transport declares (work queues, DLQs, delay
   * holding queues): `classic` (default) or `quorum`, RabbitMQ's replicated
   * queue type for a cluster (`x-queue-type: quorum`; delay holding queues then
   * dead-letter at least once). With `quorum`, a delivery's attempts are
   * `max(body.attempts, x-delivery-count)` (see the README, "Clusters and quorum
   * queues"). A queue that already exists is used as it is.
   */
  readonly queueType?: 'classic' | 'quorum';
  /**
   * `x-delivery-limit` of the quorum queues this transport declares (work
   * queues and DLQs). Default: none declared (RabbitMQ 3.x: no limit; 4.x: 20).
   * A consume refuses to start on a quorum queue whose limit is below the App's
   * `maxAttempts`.
   */
  readonly deliveryLimit?: number;
  /** pino-compatible logger; default the core's `consoleLogger()`. Bodies and credentials are never logged. */
  readonly logger?: Logger;
}

/** The options with every default filled in. */
export interface ResolvedOptions {
  readonly url: string;
  readonly mode: 'consume' | 'get';
  readonly confirm: boolean;
  readonly prefetch: number | undefined;
  readonly reconnect: ResolvedReconnectBackoff;
  readonly publishWhileDisconnected: 'fail' | 'wait';
  readonly poll: Required<PollOptions>;
  readonly requeueDelayMs: number;
  readonly scanWindow: number;
  readonly tls: TlsOptions | undefined;
  readonly connectionName: string;
  readonly connectTimeoutMs: number;
  readonly queueType: 'classic' | 'quorum';
  readonly deliveryLimit: number | undefined;
  readonly logger: Logger;
}

export function resolveOptions(options: RabbitMqTransportOptions, logger: Logger): ResolvedOptions {
  const mode = options.mode ?? 'consume';
  if (mode !== 'consume' && mode !== 'get') throw new ConfigurationError(`mode must be "consume" or "get", got ${String(mode)}`);
  const publishWhileDisconnected = options.publishWhileDisconnected ?? 'fail';
  if (publishWhileDisconnected !== 'fail' && publishWhileDisconnected !== 'wait') {
    throw new ConfigurationError(`publishWhileDisconnected must be "fail" or "wait", got ${String(publishWhileDisconnected)}`);
  }
  const resolved: ResolvedOptions = {
    url: options.url,
    mode,
    confirm: options.confirm ?? true,
    prefetch: options.prefetch,
    reconnect: resolveReconnectBackoff(options.reconnect),
    publishWhileDisconnected,
    poll: { minMs: options.poll?.minMs ?? 50, maxMs: options.poll?.maxMs ?? 1000 },
    requeueDelayMs: options.requeueDelayMs ?? 1000,
    scanWindow: options.scanWindow ?? 10_000,
    tls: options.tls,
    connectionName: options.connectionName ?? 'babelqueue',
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    queueType: options.queueType ?? 'classic',
    deliveryLimit: options.deliveryLimit,
    logger,
  };
  if (resolved.queueType !== 'classic' && resolved.queueType !== 'quorum') {
    throw new ConfigurationError(`queueType must be "classic" or "quorum", got ${String(resolved.queueType)}`);
  }
  if (resolved.deliveryLimit !== undefined) {
    if (!Number.isSafeInteger(resolved.deliveryLimit) || resolved.deliveryLimit < 0) {
      throw new ConfigurationError(`deliveryLimit must be an integer >= 0, got ${String(resolved.deliveryLimit)}`);
    }
    if (resolved.queueType !== 'quorum') throw new ConfigurationError('deliveryLimit applies to quorum queues only: set queueType: "quorum" with it');
  }
  for (const [name, value] of [
    ['prefetch', resolved.prefetch ?? 1],
    ['reconnect.initialDelayMs', resolved.reconnect.initialDelayMs],
    ['reconnect.maxDelayMs', resolved.reconnect.maxDelayMs],
    ['reconnect.multiplier', resolved.reconnect.multiplier],
    ['poll.minMs', resolved.poll.minMs],
    ['poll.maxMs', resolved.poll.maxMs],
    ['requeueDelayMs', resolved.requeueDelayMs],
    ['connectTimeoutMs', resolved.connectTimeoutMs],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new ConfigurationError(`${name} must be a finite number >= 0, got ${String(value)}`);
    }
  }
  if (resolved.prefetch !== undefined && (!Number.isInteger(resolved.prefetch) || resolved.prefetch < 1)) {
    throw new ConfigurationError(`prefetch must be an integer >= 1, got ${resolved.prefetch}`);
  }
  if (!Number.isSafeInteger(resolved.scanWindow) || resolved.scanWindow < 1) {
    throw new ConfigurationError(`scanWindow must be an integer >= 1, got ${String(resolved.scanWindow)}`);
  }
  return resolved;
}
