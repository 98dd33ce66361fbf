import type { ConnectionOptions as TlsOptions } from 'node:tls';
import {
  ConfigurationError,
  resolveReconnectBackoff,
  type Logger,
  type ReconnectBackoff,
  type ResolvedReconnectBackoff,
} from '@babelqueue/core';
import { parseArtemisBrokers, type ArtemisBroker } from './url.js';

/**
 * Reconnect backoff: delay before attempt n is `min(maxDelayMs, initialDelayMs × multiplier^(n−1))`;
 * defaults 100 ms, 5000 ms and 2 (the core's {@link ReconnectBackoff}).
 */
export type ReconnectOptions = ReconnectBackoff;

/** Options of {@link ArtemisTransport}. */
export interface ArtemisTransportOptions {
  /**
   * `artemis://user:password@host:5672` (as the Python SDK spells it),
   * `artemis+ssl://…` for TLS, or `amqp://` / `amqps://`. Credentials select
   * SASL PLAIN and are never logged; without them the client offers SASL ANONYMOUS.
   * A primary/backup pair: Qpid JMS's failover list,
   * `failover:(amqp://user:pass@primary:5672,amqp://user:pass@backup:5672)`;
   * connections go to the first broker that takes them, in turn, and after a
   * lost connection to the next one first.
   */
  readonly url: string;
  /** TLS options for `artemis+ssl://` / `amqps://` (ca, cert, key, servername, rejectUnauthorized, …). */
  readonly tls?: TlsOptions;
  /** Reconnect backoff after a lost connection (consumers re-attach their links). */
  readonly reconnect?: ReconnectOptions;
  /**
   * What `publish` does while the connection is down: `fail` (default) rejects at
   * once with {@link BrokerUnavailableError}; `wait` waits for the reconnect and
   * sends again a publish whose outcome was lost with the connection (the message
   * may then arrive twice: at-least-once).
   */
  readonly publishWhileDisconnected?: 'fail' | 'wait';
  /**
   * How long a delivery left unsettled (a failed dead-letter write, a failed
   * retry re-send, an `unsettled` decision) is held before it is released back
   * to the queue, so a broker-side fault does not become a hot redelivery loop.
   * Default 1000 ms.
   */
  readonly requeueDelayMs?: number;
  /**
   * The broker's `max-delivery-attempts` for the consumed queues (0 or -1 =
   * unlimited). A retry without delay settles the delivery `modified`
   * (delivery-failed), which the broker counts; a retry that would reach this
   * limit is re-sent instead, so the broker never moves a message BabelQueue
   * still retries to its own dead-letter address (or deletes it). Default:
   * asked of the broker (management operation `getAddressSettingsAsJSON`) each
   * time a consumer attaches; when the broker does not answer it (a user
   * without the `manage` role), a warning is logged and every retry is
   * re-sent, which no broker limit can cut short.
   */
  readonly brokerMaxDeliveryAttempts?: number;
  /**
   * How long a send may wait for the broker's outcome (and for credit: Artemis
   * grants none to a full address) before it fails and its link is closed, in
   * ms. Covers publishes, retry re-sends and dead-letter writes. Default 15000.
   */
  readonly sendTimeoutMs?: number;
  /** AMQP idle time-out the client announces (heartbeats), in ms. Default 30000. */
  readonly idleTimeoutMs?: number;
  /**
   * How long one connection attempt may take, from the TCP connect to the
   * broker's AMQP open (SASL included), before it is abandoned and tried again
   * with the reconnect backoff, in ms. A broker that accepts the socket and
   * never answers (one still starting) would otherwise hold the attempt, and
   * every publish waiting on it, for good. Default 10000.
   */
  readonly connectTimeoutMs?: number;
  /** AMQP container id of the connection (shown by the broker). Default `babelqueue-<random>`. */
  readonly containerId?: string;
  /** pino-compatible logger; default the core's `consoleLogger()`. Bodies and credentials are never logged. */
  readonly logger?: Logger;
}

/** The options with every default filled in. */
export interface ResolvedOptions {
  readonly url: string;
  /** The brokers to connect to, in the order tried (one unless the URL is a failover list). */
  readonly brokers: readonly ArtemisBroker[];
  readonly tls: TlsOptions | undefined;
  readonly reconnect: ResolvedReconnectBackoff;
  readonly publishWhileDisconnected: 'fail' | 'wait';
  readonly requeueDelayMs: number;
  /** Given by the caller; undefined: ask the broker. */
  readonly brokerMaxDeliveryAttempts: number | undefined;
  readonly sendTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly containerId: string;
  readonly logger: Logger;
}

export function resolveOptions(options: ArtemisTransportOptions, logger: Logger): ResolvedOptions {
  const brokers = parseArtemisBrokers(options.url);
  const publishWhileDisconnected = options.publishWhileDisconnected ?? 'fail';
  if (publishWhileDisconnected !== 'fail' && publishWhileDisconnected !== 'wait') {
    throw new ConfigurationError(`publishWhileDisconnected must be "fail" or "wait", got ${String(publishWhileDisconnected)}`);
  }
  const resolved: ResolvedOptions = {
    url: options.url,
    brokers,
    tls: options.tls,
    reconnect: resolveReconnectBackoff(options.reconnect),
    publishWhileDisconnected,
    requeueDelayMs: options.requeueDelayMs ?? 1000,
    brokerMaxDeliveryAttempts: options.brokerMaxDeliveryAttempts,
    sendTimeoutMs: options.sendTimeoutMs ?? 15_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    containerId: options.containerId ?? `babelqueue-${Math.random().toString(36).slice(2, 10)}`,
    logger,
  };
  for (const [name, value] of [
    ['reconnect.initialDelayMs', resolved.reconnect.initialDelayMs],
    ['reconnect.maxDelayMs', resolved.reconnect.maxDelayMs],
    ['reconnect.multiplier', resolved.reconnect.multiplier],
    ['requeueDelayMs', resolved.requeueDelayMs],
    ['idleTimeoutMs', resolved.idleTimeoutMs],
    ['sendTimeoutMs', resolved.sendTimeoutMs],
    ['connectTimeoutMs', resolved.connectTimeoutMs],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new ConfigurationError(`${name} must be a finite number >= 0, got ${String(value)}`);
    }
  }
  const max = resolved.brokerMaxDeliveryAttempts;
  if (max !== undefined && (!Number.isInteger(max) || max < -1)) {
    throw new ConfigurationError(`brokerMaxDeliveryAttempts must be an integer >= -1, got ${String(resolved.brokerMaxDeliveryAttempts)}`);
  }
  return resolved;
}
