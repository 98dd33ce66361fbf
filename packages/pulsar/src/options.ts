import type { ConnectionOptions as TlsOptions } from 'node:tls';
import {
  ConfigurationError,
  resolveReconnectBackoff,
  type Logger,
  type ReconnectBackoff,
  type ResolvedReconnectBackoff,
} from '@babelqueue/core';
import { parsePulsarUrl, redactUrl, type SubscriptionType } from './url.js';

export type { SubscriptionType };
const SUBSCRIPTION_TYPES: readonly SubscriptionType[] = ['Shared', 'Key_Shared', 'Exclusive', 'Failover'];

/** A JWT, or a function that returns the current one (called for every new connection). */
export type TokenSource = string | (() => string | Promise<string>);

/**
 * Reconnect backoff: delay before attempt n is `min(maxDelayMs, initialDelayMs × multiplier^(n−1))`;
 * defaults 100 ms, 5000 ms and 2 (the core's {@link ReconnectBackoff}).
 */
export type ReconnectOptions = ReconnectBackoff;

/** Options of {@link PulsarTransport}. */
export interface PulsarTransportOptions {
  /**
   * `pulsar://host:6650` (the Python SDK's spelling; the web service is derived
   * as `http://host:8080`), `pulsar+ssl://host:6651` (TLS, `https://host:8443`),
   * or the web service itself, `http(s)://host:port`. Query parameters: `http`,
   * `token`, `tenant`, `namespace`, `subscription`, `subscriptionType`; an
   * option given here wins over the URL's.
   */
  readonly url: string;
  /** The broker's web service (admin + WebSocket API), when it is not the derived one. */
  readonly webServiceUrl?: string;
  /**
   * The binary-protocol service (`pulsar://host:6650`, `pulsar+ssl://host:6651`)
   * when `url` is the web service: consumers then speak the binary protocol.
   * Default: `url` itself when it is a `pulsar://` or `pulsar+ssl://` URL.
   */
  readonly serviceUrl?: string;
  /**
   * How consumers read a subscription. `binary` (the default when a service
   * URL is known): Pulsar's binary protocol, one TCP connection per consume
   * loop that prefetches its free slots; a consumer whose process dies takes
   * its unacknowledged messages back to the subscription with its connection.
   * `websocket` (the default otherwise): the web service's WebSocket API (see
   * {@link receiverQueueSize}). Publishing, browsing and the admin calls use
   * the web service either way, and a partitioned topic is consumed over the
   * WebSocket API.
   */
  readonly consumerProtocol?: 'binary' | 'websocket';
  /** A JWT for `Authorization: Bearer` on every WebSocket and admin request. Default: the URL's `token`. */
  readonly token?: TokenSource;
  /** Default `public`. */
  readonly tenant?: string;
  /** Default `default`. */
  readonly namespace?: string;
  /** The subscription consumers attach to (and publishers create, see {@link createSubscription}). Default `babelqueue`. */
  readonly subscription?: string;
  /** Default `Shared`. */
  readonly subscriptionType?: SubscriptionType;
  /**
   * Where a subscription that does not exist yet starts: `earliest` (default),
   * so a queue's first consumer also gets what was published before it, or `latest`.
   */
  readonly initialPosition?: 'earliest' | 'latest';
  /**
   * Before its first publish to a topic, the transport creates the subscription
   * there (admin API, once per topic), so what is published before any consumer
   * attaches is kept, as on a queue. Default true. A subscription nobody
   * consumes keeps its backlog: use the consumers' subscription name.
   */
  readonly createSubscription?: boolean;
  /**
   * The receiver queue of each consumer in the broker's WebSocket service:
   * how many messages it prefetches. Default 0: a consumer fetches a message
   * only when the loop asks for one, so a consumer that service leaks (its
   * client went away mid-handshake, apache/pulsar#4098) holds nothing. Pulsar
   * gives no zero-queue consumer to a partitioned topic or a producer's batch;
   * the loop then switches to prefetching (and logs it). Set 1–1000 to
   * prefetch from the start.
   */
  readonly receiverQueueSize?: number;
  /**
   * How many consumer WebSockets one consume loop opens on a Shared or
   * Key_Shared subscription, its concurrency split among them (a zero-queue
   * consumer fetches one message at a time). Default 16, never more than the
   * concurrency; Exclusive and Failover subscriptions use one, and so does a
   * take in order (a redrive's drain).
   */
  readonly consumerSockets?: number;
  /**
   * How long a zero-queue consumer socket may wait for a message with permits
   * granted before the loop asks the admin API whether the broker still lists
   * its consumer (a producer's batch closes one). Default 10,000 ms.
   */
  readonly consumerCheckMs?: number;
  /** How long Pulsar waits before redelivering a negatively acknowledged message. Default 1000 ms. */
  readonly negativeAckRedeliveryDelayMs?: number;
  /** How long a publish waits for its send receipt before failing. Default 30,000 ms. */
  readonly sendTimeoutMs?: number;
  /** Reconnect backoff after a lost WebSocket. */
  readonly reconnect?: ReconnectOptions;
  /** TLS options for `pulsar+ssl://` / `https://` (ca, cert, key, servername, rejectUnauthorized, …). */
  readonly tls?: TlsOptions;
  /** pino-compatible logger; default the core's `consoleLogger()`. Bodies and tokens are never logged. */
  readonly logger?: Logger;
}

/** The options with every default filled in. */
export interface ResolvedOptions {
  readonly webServiceUrl: URL;
  /** The binary-protocol service, when known. */
  readonly serviceUrl: string | undefined;
  readonly consumerProtocol: 'binary' | 'websocket';
  /** The masked URL as given, for `target`. */
  readonly shownUrl: string;
  readonly token: TokenSource | undefined;
  readonly tenant: string;
  readonly namespace: string;
  readonly subscription: string;
  readonly subscriptionType: SubscriptionType;
  readonly initialPosition: 'earliest' | 'latest';
  readonly createSubscription: boolean;
  readonly receiverQueueSize: number | undefined;
  readonly consumerSockets: number;
  readonly consumerCheckMs: number;
  readonly negativeAckRedeliveryDelayMs: number;
  readonly sendTimeoutMs: number;
  readonly reconnect: ResolvedReconnectBackoff;
  readonly tls: TlsOptions | undefined;
  readonly logger: Logger;
}

/** Checks every option and fills in the defaults; a bad value is a {@link ConfigurationError}. */
export function resolveOptions(options: PulsarTransportOptions, logger: Logger): ResolvedOptions {
  if (options === null || typeof options !== 'object' || typeof options.url !== 'string') {
    throw new ConfigurationError('PulsarTransport needs options with a url (pulsar://host:6650)');
  }
  const parsed = parsePulsarUrl(options.url);
  const web = options.webServiceUrl === undefined ? parsed.webServiceUrl : parsePulsarUrl(options.webServiceUrl).webServiceUrl;
  const subscriptionType = options.subscriptionType ?? parsed.subscriptionType ?? 'Shared';
  if (!SUBSCRIPTION_TYPES.includes(subscriptionType)) {
    throw new ConfigurationError(`subscriptionType must be one of ${SUBSCRIPTION_TYPES.join(', ')}, got ${String(subscriptionType)}`);
  }
  const initialPosition = options.initialPosition ?? 'earliest';
  if (initialPosition !== 'earliest' && initialPosition !== 'latest') {
    throw new ConfigurationError(`initialPosition must be "earliest" or "latest", got ${String(initialPosition)}`);
  }
  const serviceUrl = options.serviceUrl === undefined ? parsed.serviceUrl : binaryService(options.serviceUrl);
  const consumerProtocol = options.consumerProtocol ?? (serviceUrl === undefined ? 'websocket' : 'binary');
  if (consumerProtocol !== 'binary' && consumerProtocol !== 'websocket') {
    throw new ConfigurationError(`consumerProtocol must be "binary" or "websocket", got ${String(consumerProtocol)}`);
  }
  if (consumerProtocol === 'binary' && serviceUrl === undefined) {
    throw new ConfigurationError('consumerProtocol "binary" needs the binary service: a pulsar:// url, or serviceUrl beside an http(s):// url');
  }
  const token = options.token ?? parsed.token;
  if (token !== undefined && !(typeof token === 'function' || (typeof token === 'string' && token.trim() !== ''))) {
    throw new ConfigurationError('token must be a non-blank string or a function that returns one');
  }
  const resolved: ResolvedOptions = {
    webServiceUrl: web,
    serviceUrl,
    consumerProtocol,
    shownUrl: redactUrl(options.url),
    token,
    tenant: name('tenant', options.tenant ?? parsed.tenant ?? 'public'),
    namespace: name('namespace', options.namespace ?? parsed.namespace ?? 'default'),
    subscription: name('subscription', options.subscription ?? parsed.subscription ?? 'babelqueue'),
    subscriptionType,
    initialPosition,
    createSubscription: options.createSubscription ?? true,
    receiverQueueSize: options.receiverQueueSize,
    consumerSockets: options.consumerSockets ?? 16,
    consumerCheckMs: options.consumerCheckMs ?? 10_000,
    negativeAckRedeliveryDelayMs: options.negativeAckRedeliveryDelayMs ?? 1000,
    sendTimeoutMs: options.sendTimeoutMs ?? 30_000,
    reconnect: resolveReconnectBackoff(options.reconnect),
    tls: options.tls,
    logger,
  };
  for (const [key, value] of [
    ['negativeAckRedeliveryDelayMs', resolved.negativeAckRedeliveryDelayMs],
    ['reconnect.initialDelayMs', resolved.reconnect.initialDelayMs],
    ['reconnect.maxDelayMs', resolved.reconnect.maxDelayMs],
    ['reconnect.multiplier', resolved.reconnect.multiplier],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new ConfigurationError(`${key} must be a finite number >= 0, got ${String(value)}`);
    }
  }
  if (!(Number.isInteger(resolved.sendTimeoutMs) && resolved.sendTimeoutMs > 0)) {
    throw new ConfigurationError(`sendTimeoutMs must be a positive integer, got ${String(resolved.sendTimeoutMs)}`);
  }
  const queueSize = resolved.receiverQueueSize;
  if (queueSize !== undefined && !(Number.isInteger(queueSize) && queueSize >= 0 && queueSize <= 1000)) {
    throw new ConfigurationError(`receiverQueueSize must be an integer from 0 to 1000, got ${String(queueSize)}`);
  }
  if (!(Number.isInteger(resolved.consumerSockets) && resolved.consumerSockets >= 1 && resolved.consumerSockets <= 64)) {
    throw new ConfigurationError(`consumerSockets must be an integer from 1 to 64, got ${String(resolved.consumerSockets)}`);
  }
  if (!(Number.isInteger(resolved.consumerCheckMs) && resolved.consumerCheckMs >= 100)) {
    throw new ConfigurationError(`consumerCheckMs must be an integer of at least 100, got ${String(resolved.consumerCheckMs)}`);
  }
  return resolved;
}

/** A `serviceUrl` option: a `pulsar://` or `pulsar+ssl://` URL. */
function binaryService(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url === undefined || !(url.protocol === 'pulsar:' || url.protocol === 'pulsar+ssl:') || url.hostname === '') {
    throw new ConfigurationError(`serviceUrl must be a pulsar:// or pulsar+ssl:// URL with a host, got ${redactUrl(String(raw))}`);
  }
  return `${url.protocol}//${url.hostname}:${url.port || (url.protocol === 'pulsar:' ? 6650 : 6651)}`;
}

/** A tenant, namespace or subscription name: non-blank, no `/` (it is a path segment). */
function name(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.includes('/')) {
    throw new ConfigurationError(`${what} must be a non-blank name without "/", got ${JSON.stringify(value)}`);
  }
  return value;
}
