import { connect, type ChannelModel } from 'amqplib';
import { BROKER, BrokerUnavailableError, TransportClosedError } from './errors.js';
import { reconnectDelayMs, type Logger } from '@babelqueue/core';
import { redactCredentials } from '@babelqueue/core/binding';
import type { ResolvedOptions } from './options.js';
import { amqpUrls, maskAmqpUrl } from './url.js';

type State = 'idle' | 'connecting' | 'open' | 'backoff' | 'failed' | 'closed';

interface Waiter {
  resolve(model: ChannelModel): void;
  reject(error: Error): void;
}

/**
 * One AMQP connection that comes back by itself. After a loss it reconnects
 * with exponential backoff, forever; only a configuration failure before the
 * first successful connection (refused login, unverifiable certificate) is
 * final, since retrying does not fix it.
 * Channels are the callers' business: they ask for the current connection and
 * open channels on it, and a channel of a lost connection is simply dead.
 */
export class ConnectionManager {
  private state: State = 'idle';
  private model: ChannelModel | undefined;
  private attempt: Promise<ChannelModel> | undefined;
  private lastError: Error | undefined;
  private failures = 0;
  private everConnected = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly waiters: Waiter[] = [];
  private readonly failureListeners = new Set<(error: Error) => void>();
  private readonly masked: string;
  /** One URL per host of the URL's host list, tried in turn. */
  private readonly urls: readonly string[];
  /** The host the next attempt starts with: after a loss, the one after the host that was lost. */
  private cursor = 0;

  constructor(private readonly options: ResolvedOptions, private readonly logger: Logger) {
    this.masked = maskAmqpUrl(options.url);
    this.urls = amqpUrls(options.url);
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
  current(): ChannelModel | undefined {
    return this.model;
  }

  /**
   * The open connection. With `wait`, waits through reconnects until one is open
   * (or the transport closes); without, gives the connection attempt in flight
   * its chance and otherwise fails at once with {@link BrokerUnavailableError}.
   */
  async open(wait: boolean): Promise<ChannelModel> {
    if (this.state === 'closed') throw new TransportClosedError(BROKER);
    if (this.state === 'failed') throw this.lastError ?? new BrokerUnavailableError(BROKER, `cannot connect to ${this.masked}`);
    if (this.model) return this.model;
    if (this.state === 'idle') this.startAttempt();
    if (wait) return new Promise<ChannelModel>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.state === 'connecting' && this.attempt) {
      try {
        return await this.attempt;
      } catch (error) {
        throw this.unavailable(error);
      }
    }
    throw this.unavailable(this.lastError);
  }

  /** Closes the connection and stops reconnecting. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.rejectWaiters(new TransportClosedError(BROKER));
    const model = this.model ?? (await this.attempt?.catch(() => undefined));
    this.model = undefined;
    if (model) await model.close().catch(() => undefined);
  }

  private startAttempt(): void {
    this.state = 'connecting';
    const attempt = this.connectOnce();
    this.attempt = attempt;
    attempt.catch(() => undefined);
  }

  private async connectOnce(): Promise<ChannelModel> {
    let model: ChannelModel;
    try {
      model = await this.connectAnyHost();
    } catch (cause) {
      const error = speaksAmqp10(cause) ? this.wrongProtocol(cause) : this.unavailable(cause);
      this.lastError = error;
      this.failures += 1;
      for (const listener of this.failureListeners) listener(error);
      if (this.state === 'closed') throw error;
      if (!this.everConnected && (isConfigurationFailure(cause) || speaksAmqp10(cause))) {
        this.state = 'failed';
        this.rejectWaiters(error);
        throw error;
      }
      this.logger.warn({ broker: this.masked, attempt: this.failures, error: error.message }, 'cannot connect to RabbitMQ; retrying');
      this.scheduleReconnect();
      throw error;
    }
    if (this.state === 'closed') {
      await model.close().catch(() => undefined);
      throw new TransportClosedError(BROKER);
    }
    this.bind(model);
    return model;
  }

  /**
   * One attempt over the host list: each host in turn from the cursor on, the
   * first that accepts wins. When every host fails, the error of the last one
   * (a refused login or certificate of any host first: retrying cannot cure it),
   * naming each host's failure when there are several.
   */
  private async connectAnyHost(): Promise<ChannelModel> {
    const failures: { url: string; cause: unknown }[] = [];
    for (let i = 0; i < this.urls.length; i++) {
      const index = (this.cursor + i) % this.urls.length;
      const url = this.urls[index] as string;
      try {
        const model = await connect(url, {
          noDelay: true,
          // amqplib's socket inactivity bound, lifted once the handshake is done.
          timeout: this.options.connectTimeoutMs,
          ...this.options.tls,
          clientProperties: { connection_name: this.options.connectionName },
        });
        this.cursor = index;
        if (failures.length > 0) this.logger.warn({ broker: maskAmqpUrl(url), skipped: failures.length }, 'connected to the next RabbitMQ host of the list');
        return model;
      } catch (cause) {
        failures.push({ url, cause });
        if (this.state === 'closed') break;
      }
    }
    const final = failures.find((f) => isConfigurationFailure(f.cause) || speaksAmqp10(f.cause));
    if (final !== undefined) throw final.cause;
    if (failures.length < 2) throw failures[0]?.cause;
    const text = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));
    throw new Error(`every host failed (${failures.map((f) => `${maskAmqpUrl(f.url)}: ${text(f.cause)}`).join('; ')})`);
  }

  private bind(model: ChannelModel): void {
    model.on('error', (error: Error) => {
      this.logger.warn({ broker: this.masked, error: redactCredentials(error.message, this.urls[0] as string) }, 'RabbitMQ connection error');
    });
    model.on('blocked', (reason: string) => this.logger.warn({ broker: this.masked, reason }, 'RabbitMQ blocked the connection'));
    model.on('close', () => {
      if (this.model !== model) return;
      this.model = undefined;
      if (this.state === 'closed') return;
      this.logger.warn({ broker: this.masked }, 'RabbitMQ connection lost; reconnecting');
      // The host that was lost is likely down: the reconnect starts with the next one.
      this.cursor = (this.cursor + 1) % this.urls.length;
      this.failures = 0;
      this.scheduleReconnect();
    });
    this.model = model;
    this.state = 'open';
    this.failures = 0;
    this.everConnected = true;
    this.lastError = undefined;
    const waiters = this.waiters.splice(0);
    for (const waiter of waiters) waiter.resolve(model);
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

  private wrongProtocol(cause: unknown): Error {
    return new BrokerUnavailableError(BROKER, 
      `${this.masked}: this server speaks AMQP 1.0, not RabbitMQ's AMQP 0-9-1; for ActiveMQ Artemis use artemis:// (the Artemis binding)`,
      { cause },
    );
  }

  private unavailable(cause: unknown): Error {
    if (cause instanceof BrokerUnavailableError || cause instanceof TransportClosedError) return cause;
    const text = cause instanceof Error ? cause.message : String(cause ?? 'not connected');
    return new BrokerUnavailableError(BROKER, 
      `RabbitMQ at ${this.masked} is unavailable: ${redactCredentials(text, this.urls[0] as string)}`,
    );
  }
}

/**
 * Failures that retrying cannot cure: refused credentials or vhost, and a
 * server certificate that does not verify. Final before the first successful
 * connection (a configuration error); after it, a reconnect keeps trying.
 */
function isConfigurationFailure(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  if (/ACCESS[-_]REFUSED|\b403\b|NOT[-_]ALLOWED|\b530\b/.test(text)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code);
}

/**
 * An AMQP 1.0 server (ActiveMQ Artemis, Azure Service Bus, Qpid) answers the
 * 0-9-1 protocol header with its own, `AMQP` then protocol id, major 1. amqplib
 * reads those bytes as a frame: type 'A', channel 'MQ', and a size whose bytes
 * are 'P', the protocol id, 1, 0 (1342177536 plain, 1342439680 with SASL),
 * reported as "Frame size … exceeds maxFrameSize". Retrying cannot cure that.
 */
function speaksAmqp10(error: unknown): boolean {
  const size = /Frame size (\d+) exceeds/.exec(error instanceof Error ? error.message : '')?.[1];
  if (size === undefined) return false;
  const n = Number(size);
  return n >>> 24 === 0x50 && ((n >>> 8) & 0xff) === 1;
}
