import type { Logger } from '../runtime/logger.js';
import { connectWithin } from '../transport/connect-within.js';
import type { ConnectOptions } from '../transport/transport.js';
import { BrokerUnavailableError, TransportClosedError } from '../transport/errors.js';
import { reconnectDelayMs, type ResolvedReconnectBackoff } from '../transport/reconnect-backoff.js';
import { maskUrl } from '../transport/registry.js';
import { redactCredentials } from './redact.js';

type State = 'idle' | 'connecting' | 'open' | 'backoff' | 'failed' | 'closed';

interface Waiter<C> {
  resolve(connection: C): void;
  reject(error: Error): void;
}

/** What a {@link ReconnectingConnection} says and how it waits. */
export interface ReconnectingConnectionSettings {
  /** The error family's broker name (`TransportClosedError(broker)`). */
  readonly broker: string;
  /** The broker as log lines and errors name it: "RabbitMQ at amqp://***@host is unavailable". */
  readonly label: string;
  /** The connection URL: masked in logs, its secrets redacted from every error text. */
  readonly url: string;
  /** How logs and errors show the URL, where the core's `maskUrl` cannot read it (a host list). Default `maskUrl(url)`. */
  readonly shownUrl?: string;
  /** Takes the secrets out of an error text, where the URL's own credentials are not all (a list of brokers). Default: the URL's. */
  readonly redact?: (text: string) => string;
  readonly reconnect: ResolvedReconnectBackoff;
  readonly logger: Logger;
  /** Keep a failure as the error's `cause`. Off where a driver's own message may carry the URL's secrets. */
  readonly keepCause?: boolean;
}

/**
 * One broker connection that comes back by itself: after a loss it reconnects
 * with exponential backoff (`reconnect`), forever; only a failure that retrying
 * cannot cure ({@link isFinal}: a refused login, a certificate that does not
 * verify) before the first successful connection is final. Callers ask for the
 * current connection ({@link open}) and open their channels or links on it; a
 * channel of a lost connection is simply dead.
 *
 * A binding supplies the broker's part: {@link dial} (one attempt, which reports
 * a later loss), {@link end} (closing one connection, bounded) and
 * {@link isFinal}.
 */
export abstract class ReconnectingConnection<C> {
  protected readonly masked: string;
  private state: State = 'idle';
  private connection: C | undefined;
  private attempt: Promise<C> | undefined;
  private lastError: Error | undefined;
  private failures = 0;
  private everConnected = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly waiters: Waiter<C>[] = [];
  private readonly failureListeners = new Set<(error: Error) => void>();

  constructor(protected readonly settings: ReconnectingConnectionSettings) {
    this.masked = settings.shownUrl ?? maskUrl(settings.url);
  }

  /**
   * One connection attempt: resolves with the open connection, rejects with
   * the cause when it never opened. `lost(connection, error?)` must be called
   * when an opened connection goes away.
   */
  protected abstract dial(lost: (connection: C, error?: Error) => void): Promise<C>;

  /** Closes one connection; never waits on a dead broker for long. */
  protected abstract end(connection: C): Promise<void>;

  /** A failure that retrying cannot cure: final before the first successful connection. */
  protected abstract isFinal(cause: unknown): boolean;

  /** The text of a failure, for the error and the log (secrets are redacted after). */
  protected describe(cause: unknown): string {
    return cause instanceof Error ? cause.message : String(cause);
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
  current(): C | undefined {
    return this.connection;
  }

  /**
   * The open connection. With `wait`, waits through reconnects until one is open
   * (or the transport closes); without, gives the connection attempt in flight
   * its chance and otherwise fails at once with `BrokerUnavailableError`.
   */
  async open(wait: boolean): Promise<C> {
    if (this.state === 'closed') throw new TransportClosedError(this.settings.broker);
    if (this.state === 'failed') throw this.lastError ?? new BrokerUnavailableError(this.settings.broker, `cannot connect to ${this.masked}`);
    if (this.connection !== undefined) return this.connection;
    if (this.state === 'idle') this.startAttempt();
    if (wait) return new Promise<C>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.state === 'connecting' && this.attempt) {
      try {
        return await this.attempt;
      } catch (error) {
        throw this.unavailable(error);
      }
    }
    throw this.unavailable(this.lastError);
  }

  /**
   * `Transport.connect`: waits for the connection under `options.timeoutMs`.
   * A final refusal (a refused login, an unverifiable certificate) fails at
   * once; an unreachable broker fails when the time runs out, naming the last
   * error and `target`. Reconnection after that stays automatic.
   */
  async connect(target: string, options: ConnectOptions): Promise<void> {
    if (this.connection !== undefined) return;
    await connectWithin(target, options, async ({ note }) => {
      const unsubscribe = this.onFailure(note);
      try {
        await this.open(true);
      } finally {
        unsubscribe();
      }
    });
  }

  /** Closes the connection and stops reconnecting. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.rejectWaiters(new TransportClosedError(this.settings.broker));
    const connection = this.connection ?? (await this.attempt?.catch(() => undefined));
    this.connection = undefined;
    if (connection !== undefined) await this.end(connection);
  }

  /** The error callers see for `cause`: the broker is unavailable, secrets redacted. */
  protected unavailable(cause: unknown): Error {
    if (cause instanceof BrokerUnavailableError || cause instanceof TransportClosedError) return cause;
    const { broker, label, keepCause } = this.settings;
    const text = this.redact(this.describe(cause ?? 'not connected'));
    return new BrokerUnavailableError(broker, `${label} at ${this.masked} is unavailable: ${text}`, keepCause === true ? { cause } : undefined);
  }

  private startAttempt(): void {
    this.state = 'connecting';
    const attempt = this.connectOnce();
    this.attempt = attempt;
    attempt.catch(() => undefined);
  }

  private async connectOnce(): Promise<C> {
    let connection: C;
    try {
      connection = await this.dial((lost, error) => this.onLoss(lost, error));
    } catch (cause) {
      throw this.fail(cause);
    }
    if (this.state === 'closed') {
      await this.end(connection);
      throw new TransportClosedError(this.settings.broker);
    }
    this.bind(connection);
    return connection;
  }

  /** A failed attempt: final when retrying cannot help, else a reconnect is scheduled. */
  private fail(cause: unknown): Error {
    const error = this.unavailable(cause);
    this.lastError = error;
    this.failures += 1;
    for (const listener of this.failureListeners) listener(error);
    if (this.state === 'closed') return error;
    if (!this.everConnected && this.isFinal(cause)) {
      this.state = 'failed';
      this.rejectWaiters(error);
      return error;
    }
    this.settings.logger.warn({ broker: this.masked, attempt: this.failures, error: error.message }, `cannot connect to ${this.settings.label}; retrying`);
    this.scheduleReconnect();
    return error;
  }

  private redact(text: string): string {
    return this.settings.redact?.(text) ?? redactCredentials(text, this.settings.url);
  }

  private bind(connection: C): void {
    this.connection = connection;
    this.state = 'open';
    this.failures = 0;
    this.everConnected = true;
    this.lastError = undefined;
    for (const waiter of this.waiters.splice(0)) waiter.resolve(connection);
  }

  private onLoss(connection: C, error: Error | undefined): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    if (this.state === 'closed') return;
    const fields = error === undefined
      ? { broker: this.masked }
      : { broker: this.masked, error: this.redact(error.message) };
    this.settings.logger.warn(fields, `${this.settings.label} connection lost; reconnecting`);
    this.failures = 0;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    this.state = 'backoff';
    const delay = reconnectDelayMs(this.settings.reconnect, this.failures);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state === 'backoff') this.startAttempt();
    }, delay);
  }

  private rejectWaiters(error: Error): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }
}
