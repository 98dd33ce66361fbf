import rhea, { type Connection, type ConnectionOptions, type Container, type EventContext } from 'rhea';
import { maskUrl, reconnectDelayMs, type Logger } from '@babelqueue/core';
import { redactSecrets, urlSecret } from '@babelqueue/core/binding';
import { separateOutcomes } from './dispositions.js';
import { BROKER, BrokerUnavailableError, TransportClosedError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { maskArtemisUrl, type ArtemisBroker } from './url.js';

type State = 'idle' | 'connecting' | 'open' | 'backoff' | 'failed' | 'closed';

interface Waiter {
  resolve(connection: Connection): void;
  reject(error: Error): void;
}

/**
 * One AMQP 1.0 connection that comes back by itself. rhea's own reconnect is
 * off: after a loss this manager opens a fresh connection (exponential
 * backoff, forever), so the deliveries and links of the lost one can never be
 * confused with the new one's — a settlement of an old delivery is dropped, not
 * sent with a delivery id the new session reuses. Only a configuration failure
 * before the first successful connection (refused credentials, a certificate
 * that does not verify) is final. Links are the callers' business: they ask for
 * the current connection, attach to it, and watch {@link lost}.
 *
 * With several brokers (a failover list: a primary and its backup) an
 * attempt is a round over the list, one broker after the other until one
 * opens; the backoff applies between rounds, and a publish that may not wait
 * fails only once the whole round has. After a loss the next broker is tried
 * first: the one just lost is the likeliest to be down (a backup opens its
 * port only once its primary is gone).
 */
export class ConnectionManager {
  private state: State = 'idle';
  private connection: Connection | undefined;
  private attempt: Promise<Connection> | undefined;
  private lastError: Error | undefined;
  private failures = 0;
  private everConnected = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly waiters: Waiter[] = [];
  private readonly failureListeners = new Set<(error: Error) => void>();
  private readonly losses = new WeakMap<Connection, { promise: Promise<void>; resolve: () => void }>();
  private readonly container: Container;
  private readonly masked: string;
  private readonly brokers: readonly ArtemisBroker[];
  /** The broker the next attempt goes to (an index into {@link brokers}). */
  private next = 0;

  constructor(private readonly options: ResolvedOptions, private readonly logger: Logger) {
    this.masked = maskArtemisUrl(options.url);
    this.brokers = options.brokers;
    this.container = rhea.create_container({ id: options.containerId });
    // A protocol error nobody else handled must be logged, never thrown from an event.
    this.container.on('error', (error: unknown) =>
      this.logger.warn({ broker: this.masked, error: this.text(error) }, 'Artemis protocol error'));
  }

  /** True once the transport closed or the first login was refused: nothing will reconnect. */
  terminal(): boolean {
    return this.state === 'closed' || this.state === 'failed';
  }

  /** Calls `listener` with every failed connection attempt until the returned function is called. */
  onFailure(listener: (error: Error) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  /** The open connection, if there is one right now. */
  current(): Connection | undefined {
    return this.connection;
  }

  /** Resolves once `connection` is gone (lost, or closed). */
  lost(connection: Connection): Promise<void> {
    return this.losses.get(connection)?.promise ?? Promise.resolve();
  }

  /**
   * The open connection. With `wait`, waits through reconnects until one is open
   * (or the transport closes); without, gives the connection attempt in flight
   * its chance and otherwise fails at once with {@link BrokerUnavailableError}.
   */
  async open(wait: boolean): Promise<Connection> {
    if (this.state === 'closed') throw new TransportClosedError(BROKER);
    if (this.state === 'failed') throw this.lastError ?? new BrokerUnavailableError(BROKER, `cannot connect to ${this.masked}`);
    if (this.connection) return this.connection;
    if (this.state === 'idle') this.startAttempt();
    if (wait) return new Promise<Connection>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.state === 'connecting' && this.attempt) {
      try {
        return await this.attempt;
      } catch (error) {
        throw this.unavailable(error);
      }
    }
    throw this.unavailable(this.lastError);
  }

  /** Closes the connection and stops reconnecting. Idempotent; never waits on a dead broker for long. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.rejectWaiters(new TransportClosedError(BROKER));
    const connection = this.connection ?? (await this.attempt?.catch(() => undefined));
    this.connection = undefined;
    if (connection === undefined) return;
    const closed = new Promise<void>((resolve) => {
      connection.once('connection_close', () => resolve());
      void this.lost(connection).then(resolve);
    });
    connection.close();
    // The broker answers a close at once; a dead one never does.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    abortSocket(connection);
    this.losses.get(connection)?.resolve();
  }

  private startAttempt(): void {
    this.state = 'connecting';
    const attempt = this.connectRound();
    this.attempt = attempt;
    attempt.catch(() => undefined);
  }

  /**
   * One attempt on each broker of the list in turn, from {@link next}, until
   * one opens. A round that fails as a whole counts as one failure (backoff,
   * then the next round); refused credentials end it at once.
   */
  private async connectRound(): Promise<Connection> {
    for (let tried = 1; ; tried += 1) {
      const broker = this.brokers[this.next]!;
      try {
        return await this.connectOnce(broker);
      } catch (cause) {
        const error = cause instanceof Error ? cause : this.asError(cause);
        if (this.state === 'closed' || error instanceof TransportClosedError) throw error;
        this.advance();
        if (tried >= this.brokers.length || (!this.everConnected && isConfigurationFailure(error))) throw this.fail(error, broker);
        this.logger.warn({ broker: maskUrl(broker.url), error: this.redact(this.text(error)) }, 'cannot connect to Artemis; trying the next broker');
      }
    }
  }

  private connectOnce(broker: ArtemisBroker): Promise<Connection> {
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
        if (this.state === 'closed') {
          connection.close();
          reject(new TransportClosedError(BROKER));
          return;
        }
        this.bind(connection, broker);
        resolve(connection);
      });
      connection.on('connection_error', (context: EventContext) => {
        remoteError = this.asError(context.connection.error ?? context.error);
      });
      connection.on('connection_close', () => undefined);
      connection.on('error', (error: unknown) => {
        remoteError = this.asError(error);
      });
      connection.on('disconnected', (context: EventContext) => {
        clearTimeout(timer);
        resolveLoss();
        if (opened) {
          this.onLoss(connection, broker, remoteError ?? this.asError(context.error));
          return;
        }
        const cause = remoteError ?? this.asError(context.error ?? 'the connection closed before it opened');
        reject(cause);
      });
    });
  }

  /** A failed attempt: final when retrying cannot help, else a reconnect is scheduled. */
  private fail(cause: Error, broker: ArtemisBroker): Error {
    const error = this.unavailable(cause);
    this.lastError = error;
    this.failures += 1;
    for (const listener of this.failureListeners) listener(error);
    if (this.state === 'closed') return error;
    if (!this.everConnected && isConfigurationFailure(cause)) {
      this.state = 'failed';
      this.rejectWaiters(error);
      return error;
    }
    this.logger.warn({ broker: maskUrl(broker.url), attempt: this.failures, error: error.message }, 'cannot connect to Artemis; retrying');
    this.scheduleReconnect();
    return error;
  }

  private bind(connection: Connection, broker: ArtemisBroker): void {
    if (this.brokers.length > 1) this.logger.info({ broker: maskUrl(broker.url) }, 'connected to Artemis');
    this.connection = connection;
    this.state = 'open';
    this.failures = 0;
    this.everConnected = true;
    this.lastError = undefined;
    for (const waiter of this.waiters.splice(0)) waiter.resolve(connection);
  }

  private onLoss(connection: Connection, broker: ArtemisBroker, error: Error): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    if (this.state === 'closed') return;
    this.logger.warn({ broker: maskUrl(broker.url), error: this.redact(error.message) }, 'Artemis connection lost; reconnecting');
    this.failures = 0;
    this.advance();
    this.scheduleReconnect();
  }

  /** The next attempt goes to the next broker of the list. */
  private advance(): void {
    this.next = (this.next + 1) % this.brokers.length;
  }

  private scheduleReconnect(): void {
    this.state = 'backoff';
    const delay = reconnectDelayMs(this.options.reconnect, this.failures);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state === 'backoff') this.startAttempt();
    }, delay);
  }

  private rejectWaiters(error: Error): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  private unavailable(cause: unknown): Error {
    if (cause instanceof BrokerUnavailableError || cause instanceof TransportClosedError) return cause;
    return new BrokerUnavailableError(BROKER, `Artemis at ${this.masked} is unavailable: ${this.redact(this.text(cause ?? 'not connected'))}`, {
      cause,
    });
  }

  private asError(value: unknown): Error {
    if (value instanceof Error) return value;
    if (typeof value === 'object' && value !== null) {
      const { condition, description } = value as { condition?: unknown; description?: unknown };
      const error = new Error([condition, description].filter((x) => x !== undefined && x !== '').join(': ') || 'unknown error');
      (error as { condition?: unknown }).condition = condition;
      return error;
    }
    return new Error(String(value));
  }

  private text(error: unknown): string {
    return this.asError(error).message;
  }

  private redact(text: string): string {
    return redactSecrets(text, this.brokers.map((broker) => urlSecret(broker.url)));
  }
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
