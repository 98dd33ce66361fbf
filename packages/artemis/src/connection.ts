import rhea, { type Connection, type ConnectionOptions, type Container, type EventContext } from 'rhea';
import { maskUrl, type Logger } from '@babelqueue/core';
import { ReconnectingConnection, redactSecrets, urlSecret } from '@babelqueue/core/binding';
import { separateOutcomes } from './dispositions.js';
import { BROKER, BrokerUnavailableError } from './errors.js';
import { writeFramesTogether } from './frame-writes.js';
import type { ResolvedOptions } from './options.js';
import { maskArtemisUrl, type ArtemisBroker } from './url.js';

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
 *
 * With several brokers (a failover list: a primary and its backup) an
 * attempt is a round over the list, one broker after the other until one
 * opens; the backoff applies between rounds, and a publish that may not wait
 * fails only once the whole round has. After a loss the next broker is tried
 * first: the one just lost is the likeliest to be down (a backup opens its
 * port only once its primary is gone).
 */
export class ConnectionManager extends ReconnectingConnection<Connection> {
  private readonly losses = new WeakMap<Connection, { promise: Promise<void>; resolve: () => void }>();
  private readonly container: Container;
  private readonly brokers: readonly ArtemisBroker[];
  /** The broker the next attempt goes to (an index into {@link brokers}). */
  private next = 0;

  constructor(private readonly options: ResolvedOptions, logger: Logger) {
    const secrets = options.brokers.map((broker) => urlSecret(broker.url));
    super({
      broker: BROKER,
      label: 'Artemis',
      url: options.url,
      // A failover list is no URL the core can mask, and each broker may have its own password.
      shownUrl: maskArtemisUrl(options.url),
      redact: (text) => redactSecrets(text, secrets),
      reconnect: options.reconnect,
      logger,
      keepCause: true,
    });
    this.brokers = options.brokers;
    this.container = rhea.create_container({ id: options.containerId });
    // A protocol error nobody else handled must be logged, never thrown from an event.
    this.container.on('error', (error: unknown) =>
      logger.warn({ broker: this.masked, error: this.describe(error) }, 'Artemis protocol error'));
  }

  /** Resolves once `connection` is gone (lost, or closed). */
  lost(connection: Connection): Promise<void> {
    return this.losses.get(connection)?.promise ?? Promise.resolve();
  }

  /**
   * One attempt on each broker of the list in turn, from {@link next}, until
   * one opens. A round that fails as a whole counts as one failure (backoff,
   * then the next round); refused credentials end it at once.
   */
  protected async dial(lost: (connection: Connection, error?: Error) => void): Promise<Connection> {
    for (let tried = 1; ; tried += 1) {
      const broker = this.brokers[this.next]!;
      try {
        const connection = await this.openBroker(broker, lost);
        if (this.brokers.length > 1) this.settings.logger.info({ broker: maskUrl(broker.url) }, 'connected to Artemis');
        return connection;
      } catch (cause) {
        const error = asError(cause);
        this.advance();
        if (tried >= this.brokers.length || isConfigurationFailure(error)) throw error;
        this.settings.logger.warn({ broker: maskUrl(broker.url), error: this.settings.redact!(error.message) }, 'cannot connect to Artemis; trying the next broker');
      }
    }
  }

  /** The next attempt goes to the next broker of the list. */
  private advance(): void {
    this.next = (this.next + 1) % this.brokers.length;
  }

  private openBroker(broker: ArtemisBroker, lost: (connection: Connection, error?: Error) => void): Promise<Connection> {
    const { tls, idleTimeoutMs, connectTimeoutMs } = this.options;
    const { endpoint } = broker;
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
    writeFramesTogether(connection);
    let opened = false;
    let remoteError: Error | undefined;
    let resolveLoss!: () => void;
    const promise = new Promise<void>((resolve) => (resolveLoss = resolve));
    this.losses.set(connection, { promise, resolve: resolveLoss });
    return new Promise<Connection>((resolve, reject) => {
      // rhea bounds nothing before the open: a broker that took the socket and never
      // answers would hold this attempt for good. Abandoned, it fails and is tried again.
      const timer = setTimeout(() => {
        remoteError = new BrokerUnavailableError(BROKER, `no AMQP open from ${maskUrl(broker.url)} within ${connectTimeoutMs} ms`);
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
          // The broker just lost is the likeliest to be down: the reconnect starts with the next.
          this.advance();
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
