import rhea, { type Connection, type ConnectionOptions, type Container, type EventContext } from 'rhea';
import type { Logger } from '@babelqueue/core';
import { ReconnectingConnection } from '@babelqueue/core/binding';
import { separateOutcomes } from './dispositions.js';
import { BROKER, BrokerUnavailableError } from './errors.js';
import type { ResolvedOptions } from './options.js';

/**
 * One AMQP 1.0 connection that comes back by itself (core's
 * `ReconnectingConnection`). rhea's own reconnect is off: after a loss this
 * manager opens a fresh connection (exponential backoff, forever), so the
 * deliveries and links of the lost one can never be confused with the new
 * one's — a settlement of an old delivery is dropped, not sent with a delivery
 * id the new session reuses. Only a configuration failure before the first
 * successful connection (refused credentials, a certificate that does not
 * verify) is final. Links are the callers' business: they ask for the current
 * connection, attach to it, and watch {@link lost}.
 */
export class ConnectionManager extends ReconnectingConnection<Connection> {
  private readonly losses = new WeakMap<Connection, { promise: Promise<void>; resolve: () => void }>();
  private readonly container: Container;

  constructor(private readonly options: ResolvedOptions, logger: Logger) {
    super({ broker: BROKER, label: 'Artemis', url: options.url, reconnect: options.reconnect, logger, keepCause: true });
    this.container = rhea.create_container({ id: options.containerId });
    // A protocol error nobody else handled must be logged, never thrown from an event.
    this.container.on('error', (error: unknown) =>
      logger.warn({ broker: this.masked, error: this.describe(error) }, 'Artemis protocol error'));
  }

  /** Resolves once `connection` is gone (lost, or closed). */
  lost(connection: Connection): Promise<void> {
    return this.losses.get(connection)?.promise ?? Promise.resolve();
  }

  protected dial(lost: (connection: Connection, error?: Error) => void): Promise<Connection> {
    const { endpoint, tls, idleTimeoutMs, connectTimeoutMs } = this.options;
    const options: ConnectionOptions = {
      host: endpoint.host,
      hostname: endpoint.host,
      port: endpoint.port,
      transport: endpoint.tls ? 'tls' : 'tcp',
      reconnect: false,
      tcp_no_delay: true,
      idle_time_out: idleTimeoutMs,
      ...(endpoint.username === undefined ? {} : { username: endpoint.username }),
      ...(endpoint.password === undefined ? {} : { password: endpoint.password }),
      ...(endpoint.tls ? { servername: endpoint.host, ...tls } : {}),
    } as ConnectionOptions;
    const connection = this.container.connect(options);
    separateOutcomes(connection);
    let opened = false;
    let remoteError: Error | undefined;
    let resolveLoss!: () => void;
    const promise = new Promise<void>((resolve) => (resolveLoss = resolve));
    this.losses.set(connection, { promise, resolve: resolveLoss });
    return new Promise<Connection>((resolve, reject) => {
      // rhea bounds nothing before the open: a broker that took the socket and never
      // answers would hold this attempt for good. Abandoned, it fails and is tried again.
      const timer = setTimeout(() => {
        remoteError = new BrokerUnavailableError(BROKER, `no AMQP open from ${this.masked} within ${connectTimeoutMs} ms`);
        abortSocket(connection);
      }, connectTimeoutMs);
      connection.on('connection_open', () => {
        clearTimeout(timer);
        opened = true;
        resolve(connection);
      });
      connection.on('connection_error', (context: EventContext) => {
        remoteError = asError(context.connection.error ?? context.error);
      });
      connection.on('connection_close', () => undefined);
      connection.on('error', (error: unknown) => {
        remoteError = asError(error);
      });
      connection.on('disconnected', (context: EventContext) => {
        clearTimeout(timer);
        resolveLoss();
        if (opened) {
          lost(connection, remoteError ?? asError(context.error));
          return;
        }
        reject(remoteError ?? asError(context.error ?? 'the connection closed before it opened'));
      });
    });
  }

  /** Closes `connection`; the broker answers a close at once, a dead one never does (2 s bound). */
  protected async end(connection: Connection): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      connection.once('connection_close', () => resolve());
      void this.lost(connection).then(resolve);
    });
    connection.close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    abortSocket(connection);
    this.losses.get(connection)?.resolve();
  }

  protected isFinal(cause: unknown): boolean {
    return isConfigurationFailure(asError(cause));
  }

  protected override describe(cause: unknown): string {
    return asError(cause).message;
  }
}

/** rhea reports AMQP errors as `{ condition, description }`; an Error keeps the condition. */
function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  if (typeof value === 'object' && value !== null) {
    const { condition, description } = value as { condition?: unknown; description?: unknown };
    const error = new Error([condition, description].filter((x) => x !== undefined && x !== '').join(': ') || 'unknown error');
    (error as { condition?: unknown }).condition = condition;
    return error;
  }
  return new Error(String(value));
}

/**
 * Ends the socket and stops rhea's heartbeat timers (rhea's `abort_socket`;
 * destroying the socket alone would leave them holding the event loop).
 */
function abortSocket(connection: Connection): void {
  const internal = connection as unknown as { socket?: unknown; abort_socket?: (socket: unknown) => void };
  if (internal.socket !== undefined) internal.abort_socket?.(internal.socket);
}

/**
 * Failures that retrying cannot cure: refused credentials, and a server
 * certificate that does not verify. Final before the first successful
 * connection (a configuration error); after it, a reconnect keeps trying.
 */
function isConfigurationFailure(error: Error): boolean {
  const condition = (error as { condition?: unknown }).condition;
  if (condition === 'amqp:unauthorized-access') return true;
  if (/unauthorized-access|authenticat|SASL/i.test(error.message)) return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code);
}
