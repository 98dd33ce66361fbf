import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions as TlsOptions } from 'node:tls';
import { coalesceWrites } from '@babelqueue/core/binding';
import { BROKER, BrokerUnavailableError, PulsarRefusedError } from '../errors.js';
import * as cmd from './commands.js';
import { CommandType, type Incoming } from './commands.js';
import { commandFrame, FrameReader, type Frame, type MessagePayload } from './frames.js';

/** The client version the binding announces in CONNECT. */
const CLIENT_VERSION = 'babelqueue-typescript';
/** How long the handshake and a request may take. */
const REQUEST_TIMEOUT_MS = 30_000;
/** A connection silent this long is pinged; one silent for two ticks is ended (half-open). */
const KEEPALIVE_MS = 30_000;

/** What a connection needs to open. */
export interface BrokerAddress {
  /** `pulsar://host:port` or `pulsar+ssl://host:port`. */
  readonly url: string;
  readonly tls: TlsOptions | undefined;
  /** The current token, asked for each connection and each auth challenge; undefined without auth. */
  readonly token: (() => Promise<string>) | undefined;
  /** Through a proxy: the broker the proxy connects this connection to. */
  readonly proxyToBrokerUrl?: string;
  /** Told whether each open reached the broker (the transport's `connected`). */
  readonly reached?: (ok: boolean) => void;
}

/** What a consumer on a connection is told. */
export interface ConsumerHandler {
  message(command: Incoming, payload: MessagePayload): void;
  /** The broker closed this consumer (the topic moved or was unloaded): it subscribes again. */
  closedByBroker(): void;
}

/** A request the broker refused (CommandError, a failed lookup). */
export class PulsarCommandError extends PulsarRefusedError {
  override readonly name = 'PulsarCommandError';
  constructor(readonly serverError: string, message: string) {
    // 401/403 make it a configuration failure, as a refused WebSocket upgrade is.
    super(serverError === 'AuthenticationError' ? 401 : serverError === 'AuthorizationError' ? 403 : 0, message);
  }
}

/**
 * One TCP (or TLS) connection to a broker speaking Pulsar's binary protocol:
 * the CONNECT handshake, requests paired with their answers by request id,
 * messages handed to their consumer by consumer id, PING/PONG both ways.
 * Commands sent in one run of callbacks leave in one write.
 */
export class BrokerConnection {
  private readonly pending = new Map<number, { resolve: (command: Incoming) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private readonly consumers = new Map<number, ConsumerHandler>();
  private readonly reader = new FrameReader();
  private nextRequestId = 1;
  private heardFrom = true;
  private keepalive: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  /** Resolves once the connection is closed, however that happened. */
  readonly closed: Promise<void>;
  private markClosed!: () => void;

  private constructor(
    private readonly socket: Socket,
    private readonly address: BrokerAddress,
  ) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
  }

  /** Opens a connection and completes the handshake; rejects as the WebSocket open does (refused credentials, an unreachable broker). */
  static async open(address: BrokerAddress): Promise<BrokerConnection> {
    const token = address.token === undefined ? undefined : await address.token();
    const url = new URL(address.url);
    const port = Number(url.port || (url.protocol === 'pulsar+ssl:' ? 6651 : 6650));
    const socket = url.protocol === 'pulsar+ssl:'
      ? tlsConnect({ host: url.hostname, port, ...(isIP(url.hostname) === 0 ? { servername: url.hostname } : {}), ...(address.tls ?? {}) })
      : tcpConnect({ host: url.hostname, port });
    socket.setNoDelay(true);
    const connection = new BrokerConnection(socket, address);
    const connected = new Promise<Incoming>((resolve, reject) => {
      connection.pending.set(0, { resolve, reject, timer: setTimeout(() => socket.destroy(new Error(`no CONNECTED within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS) });
    });
    connection.attach();
    connection.send(cmd.connect({
      clientVersion: CLIENT_VERSION,
      ...(token === undefined ? {} : { authMethod: 'token', authData: token }),
      ...(address.proxyToBrokerUrl === undefined ? {} : { proxyToBrokerUrl: address.proxyToBrokerUrl }),
    }));
    try {
      await connected;
    } catch (error) {
      socket.destroy();
      if (error instanceof BrokerUnavailableError && !(error instanceof PulsarRefusedError)) address.reached?.(false);
      throw error;
    }
    address.reached?.(true);
    return connection;
  }

  /** The broker this connection reached. */
  get url(): string {
    return this.address.url;
  }

  get isOpen(): boolean {
    return this.failure === undefined && !this.socket.destroyed;
  }

  /** Sends a command. */
  send(command: Buffer): void {
    if (!this.isOpen) return;
    coalesceWrites(this.socket);
    this.socket.write(commandFrame(command));
  }

  /** Sends a request built for a fresh request id; resolves with its answer, rejects with a {@link PulsarCommandError} for an ERROR. */
  request(build: (requestId: number) => Buffer): Promise<Incoming> {
    if (!this.isOpen) return Promise.reject(this.failure ?? this.lost('the connection is closed'));
    const requestId = this.nextRequestId++;
    const answer = new Promise<Incoming>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(this.lost(`no answer within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(requestId, { resolve, reject, timer });
    });
    this.send(build(requestId));
    return answer;
  }

  /** Routes the MESSAGE and CLOSE_CONSUMER commands of a consumer id to `handler` until {@link removeConsumer}. */
  addConsumer(consumerId: number, handler: ConsumerHandler): void {
    this.consumers.set(consumerId, handler);
  }

  removeConsumer(consumerId: number): void {
    this.consumers.delete(consumerId);
  }

  /** Ends the connection; the broker then hands every unacknowledged message of its consumers to others. */
  close(): void {
    this.socket.end();
    this.socket.destroySoon();
  }

  /** Ends the connection at once. */
  destroy(): void {
    this.socket.destroy();
  }

  private attach(): void {
    const { socket } = this;
    socket.on('data', (chunk: Buffer) => {
      this.heardFrom = true;
      try {
        this.reader.push(chunk, (frame) => this.dispatch(frame));
      } catch (error) {
        socket.destroy(error as Error);
      }
    });
    socket.on('error', (error) => {
      this.failure ??= this.lost(`Pulsar at ${this.address.url} is unavailable: ${error.message}`, error);
    });
    socket.on('close', () => {
      clearInterval(this.keepalive);
      const failure = this.failure ?? this.lost(`Pulsar at ${this.address.url} closed the connection`);
      this.failure = failure;
      for (const { reject, timer } of this.pending.values()) {
        clearTimeout(timer);
        reject(failure);
      }
      this.pending.clear();
      this.markClosed();
    });
    this.keepalive = setInterval(() => {
      if (!this.heardFrom) {
        socket.destroy(new Error(`no answer from ${this.address.url} in ${2 * KEEPALIVE_MS} ms`));
        return;
      }
      this.heardFrom = false;
      this.send(cmd.ping());
    }, KEEPALIVE_MS);
    this.keepalive.unref();
  }

  private dispatch(frame: Frame): void {
    const command = cmd.decodeCommand(frame.buf, frame.commandStart, frame.commandEnd);
    switch (command.type) {
      case CommandType.MESSAGE: {
        const handler = this.consumers.get(command.consumerId ?? -1);
        if (handler !== undefined && frame.payload !== undefined) handler.message(command, frame.payload);
        return;
      }
      case CommandType.CONNECTED:
        this.settle(0, command);
        return;
      case CommandType.SUCCESS:
      case CommandType.LOOKUP_RESPONSE:
      case CommandType.PARTITIONED_METADATA_RESPONSE:
        this.settle(command.requestId ?? -1, command);
        return;
      case CommandType.ERROR: {
        const error = new PulsarCommandError(command.error ?? 'UnknownError', `Pulsar refused the request: ${command.error}: ${command.message ?? ''}`);
        // An ERROR before CONNECTED answers the handshake (refused credentials).
        this.fail(this.pending.has(0) ? 0 : command.requestId ?? -1, error);
        return;
      }
      case CommandType.PING:
        this.send(cmd.pong());
        return;
      case CommandType.CLOSE_CONSUMER:
      case CommandType.TOPIC_MIGRATED:
        if (command.type === CommandType.TOPIC_MIGRATED && command.resourceType !== 1) return;
        this.consumers.get(command.consumerId ?? -1)?.closedByBroker();
        return;
      case CommandType.AUTH_CHALLENGE:
        void this.answerChallenge();
        return;
      default:
        // PONG, ACTIVE_CONSUMER_CHANGE, REACHED_END_OF_TOPIC, CLOSE_PRODUCER: nothing to do.
        return;
    }
  }

  private async answerChallenge(): Promise<void> {
    try {
      const token = this.address.token === undefined ? '' : await this.address.token();
      this.send(cmd.authResponse(CLIENT_VERSION, 'token', token));
    } catch (error) {
      this.socket.destroy(error as Error);
    }
  }

  private settle(requestId: number, command: Incoming): void {
    this.take(requestId)?.resolve(command);
  }

  private fail(requestId: number, error: Error): void {
    this.take(requestId)?.reject(error);
  }

  /** The request waiting on this id, no longer waiting. */
  private take(requestId: number): { resolve: (command: Incoming) => void; reject: (error: Error) => void } | undefined {
    const waiting = this.pending.get(requestId);
    if (waiting === undefined) return undefined;
    this.pending.delete(requestId);
    clearTimeout(waiting.timer);
    return waiting;
  }

  private lost(message: string, cause?: Error): BrokerUnavailableError {
    return new BrokerUnavailableError(BROKER, message, cause === undefined ? undefined : { cause });
  }
}
