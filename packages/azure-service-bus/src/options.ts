import type { ServiceBusClient, ServiceBusClientOptions, TokenCredential } from '@azure/service-bus';
import { ConfigurationError, consoleLogger, type Logger } from '@babelqueue/core';
import { type EnvelopeProjection } from '@babelqueue/core/binding';

/** What a {@link AzureServiceBusTransportOptions.sessionId} function is given: the message about to be sent. */
export interface SessionSource {
  /** The queue it is sent to. */
  readonly queue: string;
  /** The envelope bytes (a raw publish's bytes as given). */
  readonly body: Buffer;
  /** The envelope's projection; undefined for a raw publish. */
  readonly projection: EnvelopeProjection | undefined;
}

/**
 * Options of {@link AzureServiceBusTransport}. Give exactly one way to reach the
 * namespace: `connectionString`, `url`, `fullyQualifiedNamespace` (+ `credential`)
 * or a ready `client`.
 */
export interface AzureServiceBusTransportOptions {
  /**
   * `Endpoint=sb://<namespace>.servicebus.windows.net/;SharedAccessKeyName=…;SharedAccessKey=…`
   * (or `SharedAccessSignature=…`). `UseDevelopmentEmulator=true` switches to plain AMQP
   * on the endpoint's port (the Service Bus emulator, or the repository's test stand-in).
   */
  readonly connectionString?: string;
  /**
   * A URL as the Python SDK spells it: `sb://<namespace>.servicebus.windows.net` (token
   * credential), `sb://<keyName>:<key>@<namespace>` (shared access key), or `sb://` alone
   * (the `AZURE_SERVICEBUS_CONNECTION_STRING` environment variable). `servicebus://` and
   * `azureservicebus://` are accepted too; `?UseDevelopmentEmulator=true` as above.
   */
  readonly url?: string;
  /** The namespace host, e.g. `orders.servicebus.windows.net`, used with `credential`. */
  readonly fullyQualifiedNamespace?: string;
  /**
   * An Azure AD token credential (e.g. `new DefaultAzureCredential()` from `@azure/identity`).
   * Without one, a namespace or token URL loads `@azure/identity`'s `DefaultAzureCredential`
   * (install it yourself; it is not a dependency of this package).
   */
  readonly credential?: TokenCredential;
  /** A client you built and own; `close()` then leaves it open. */
  readonly client?: ServiceBusClient;
  /**
   * Options for the `ServiceBusClient` the transport makes (not used with `client`):
   * `retryOptions`, `webSocketOptions`, `userAgentOptions`, … The SDK's defaults wait
   * 60 s for a send's outcome (`retryOptions.timeoutInMs`) and 30 s between tries, so a send
   * whose outcome a dropped connection lost is sent again only after 90 s.
   */
  readonly clientOptions?: ServiceBusClientOptions;
  /**
   * The consumed queues' LockDuration in ms (Service Bus default 60 000): what
   * `reservationMs()` reports, so the App refuses a handler timeout that is not below it.
   */
  readonly lockDurationMs?: number;
  /**
   * How long the SDK keeps renewing the lock of a message whose handler is still
   * running (`maxAutoLockRenewalDurationInMs`). Default 300 000 (the SDK's); 0 turns it off.
   */
  readonly maxLockRenewalMs?: number;
  /** Longest one receive call waits for a first message, in ms. Default 1000. */
  readonly receiveWaitMs?: number;
  /**
   * The `sessionId` of published messages (a session-enabled queue needs one; Service Bus
   * keeps the messages of one session in order): one for every message, or a function of
   * each message (e.g. a customer id read from the body); undefined sends none. Not a
   * contract field. A retry copy, and a record the consumer writes to `<queue>.dlq`, keeps the
   * SessionId of the message it came from; only for a message without one is the function
   * asked, with the record's bytes (which, for a poison record, are not an envelope). A
   * function that throws fails that publish; for a copy or record, the write fails and the
   * original is abandoned (redelivered), as for any failed write.
   */
  readonly sessionId?: string | ((message: SessionSource) => string | undefined);
  /**
   * The session-enabled queues (`RequiresSession`) this transport consumes. Each is read with
   * session receivers: one per session, the next available session accepted, its messages
   * handled one at a time in order, the session let go after a receive wait without a message;
   * up to `concurrency` sessions at once. A queue that requires sessions cannot be read without
   * one, and one that does not cannot be read with one, so list exactly those.
   */
  readonly sessionQueues?: readonly string[];
  /** Sent as every message's `partitionKey` (partitioned entities). Not a contract field. */
  readonly partitionKey?: string;
  /** pino-compatible logger; default the core's `consoleLogger()`. Bodies and keys are never logged. */
  readonly logger?: Logger;
}

export interface ResolvedOptions {
  readonly lockDurationMs: number;
  readonly maxLockRenewalMs: number;
  readonly receiveWaitMs: number;
  readonly sessionId: (message: SessionSource) => string | undefined;
  /** Lower-cased: Service Bus entity names are case-insensitive. */
  readonly sessionQueues: ReadonlySet<string>;
  readonly partitionKey: string | undefined;
  readonly logger: Logger;
}

export function resolveOptions(options: AzureServiceBusTransportOptions): ResolvedOptions {
  const lockDurationMs = options.lockDurationMs ?? 60_000;
  const maxLockRenewalMs = options.maxLockRenewalMs ?? 300_000;
  const receiveWaitMs = options.receiveWaitMs ?? 1_000;
  for (const [name, value, min] of [['lockDurationMs', lockDurationMs, 1], ['maxLockRenewalMs', maxLockRenewalMs, 0], ['receiveWaitMs', receiveWaitMs, 1]] as const) {
    if (!(Number.isFinite(value) && value >= min)) throw new ConfigurationError(`${name} must be a number >= ${min}, got ${String(value)}`);
  }
  const sessionId = options.sessionId;
  if (sessionId !== undefined && typeof sessionId !== 'string' && typeof sessionId !== 'function') {
    throw new ConfigurationError(`sessionId must be a string or a function, got ${typeof sessionId}`);
  }
  const sessionQueues = options.sessionQueues ?? [];
  if (!Array.isArray(sessionQueues) || sessionQueues.some((q) => typeof q !== 'string' || q === '')) {
    throw new ConfigurationError('sessionQueues must be a list of queue names');
  }
  return {
    lockDurationMs,
    maxLockRenewalMs,
    receiveWaitMs,
    sessionId: typeof sessionId === 'function' ? sessionId : () => sessionId,
    sessionQueues: new Set(sessionQueues.map((q) => q.toLowerCase())),
    partitionKey: options.partitionKey,
    logger: options.logger ?? consoleLogger(),
  };
}
