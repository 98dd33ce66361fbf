import WebSocket from 'ws';
import type { Logger } from '@babelqueue/core';
import type { PulsarConnection } from './connection.js';
import { BROKER, PublishNotConfirmedError, TransportClosedError } from './errors.js';
import { sendFrame } from './frame-send.js';
import { parseFrame, type ProducerMessage } from './frames.js';
import type { Send } from './send.js';
import { topicPath, type Topic } from './topics.js';


interface Waiting {
  resolve(messageId: string): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  /** The socket the message went out on: only its loss fails the send. */
  socket: WebSocket;
}

/**
 * The producer WebSocket of one topic. A send resolves only on the broker's
 * `ok` receipt (the message is stored); an error receipt, no receipt within
 * the send timeout, or a connection lost before the receipt rejects it. A lost
 * socket is reopened by the next send, so an outage fails publishes clearly
 * instead of queueing them.
 */
class TopicProducer {
  private socket: WebSocket | undefined;
  private opening: Promise<WebSocket> | undefined;
  private readonly waiting = new Map<string, Waiting>();
  private sequence = 0;
  private closed = false;

  constructor(
    private readonly topic: Topic,
    private readonly connection: PulsarConnection,
    private readonly sendTimeoutMs: number,
    private readonly logger: Logger,
  ) {}

  async send(message: Send): Promise<string> {
    const ws = await this.open();
    const context = String(++this.sequence);
    const frame: ProducerMessage = {
      payload: message.body.toString('base64'),
      properties: message.properties,
      context,
      ...(message.delayMs !== undefined && message.delayMs > 0 ? { deliverAfterMs: Math.ceil(message.delayMs) } : {}),
    };
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(context);
        reject(new PublishNotConfirmedError(BROKER, this.topic.name, `no send receipt within ${this.sendTimeoutMs} ms; it may or may not be stored`));
      }, this.sendTimeoutMs + 1000);
      this.waiting.set(context, { resolve, reject, timer, socket: ws });
      sendFrame(ws, JSON.stringify(frame), (error) => {
        if (error) this.settle(context, new PublishNotConfirmedError(BROKER, this.topic.name, `the send failed: ${error.message}`, { cause: error }));
      });
    });
  }

  close(): void {
    this.closed = true;
    this.failAll('the transport closed before the send receipt came; it may or may not be stored');
    this.socket?.close();
    this.socket = undefined;
  }

  private open(): Promise<WebSocket> {
    if (this.closed) return Promise.reject(new TransportClosedError(BROKER));
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    // A socket on its way out (the broker went away) is not reused; its 'close' still fails its waiters.
    this.socket = undefined;
    this.opening ??= this.connection
      .openSocket(`/ws/v2/producer/${topicPath(this.topic)}`, { sendTimeoutMillis: String(this.sendTimeoutMs) })
      .then((ws) => {
        if (this.closed) {
          ws.close();
          throw new TransportClosedError(BROKER);
        }
        this.bind(ws);
        return ws;
      })
      .finally(() => {
        this.opening = undefined;
      });
    return this.opening;
  }

  private bind(ws: WebSocket): void {
    this.socket = ws;
    ws.on('message', (data) => {
      const ack = parseFrame(data);
      const context = typeof ack?.context === 'string' ? ack.context : undefined;
      if (ack === undefined || context === undefined) return;
      if (ack.result === 'ok') {
        this.settle(context, undefined, typeof ack.messageId === 'string' ? ack.messageId : '');
      } else {
        const reason = `${String(ack.result)}${typeof ack.errorMsg === 'string' ? `: ${ack.errorMsg}` : ''}`;
        this.settle(context, new PublishNotConfirmedError(BROKER, this.topic.name, reason));
      }
    });
    ws.once('close', (code, reason) => {
      if (this.socket === ws) this.socket = undefined;
      if (!this.closed) {
        this.logger.debug({ topic: this.topic.name, code, reason: reason.toString('utf8') }, 'Pulsar producer WebSocket closed; the next publish reopens it');
      }
      this.failAll('the WebSocket closed before the send receipt came; it may or may not be stored', ws);
    });
  }

  private settle(context: string, error: Error | undefined, messageId = ''): void {
    const waiting = this.waiting.get(context);
    if (waiting === undefined) return;
    this.waiting.delete(context);
    clearTimeout(waiting.timer);
    if (error) waiting.reject(error);
    else waiting.resolve(messageId);
  }

  /** Fails every send still waiting (on `socket` only, when given). */
  private failAll(reason: string, socket?: WebSocket): void {
    for (const [context, waiting] of [...this.waiting]) {
      if (socket === undefined || waiting.socket === socket) this.settle(context, new PublishNotConfirmedError(BROKER, this.topic.name, reason));
    }
  }
}

/** The producer WebSockets of a transport, one per topic, opened on first use. */
export class Producers {
  private readonly byTopic = new Map<string, TopicProducer>();

  constructor(
    private readonly connection: PulsarConnection,
    private readonly sendTimeoutMs: number,
    private readonly logger: Logger,
  ) {}

  /** Sends one message to `topic`; resolves with its message id once the broker stored it. */
  send(topic: Topic, message: Send): Promise<string> {
    let producer = this.byTopic.get(topic.name);
    if (producer === undefined) {
      producer = new TopicProducer(topic, this.connection, this.sendTimeoutMs, this.logger);
      this.byTopic.set(topic.name, producer);
    }
    return producer.send(message);
  }

  /** Closes every producer; sends still waiting for a receipt reject. */
  close(): void {
    for (const producer of this.byTopic.values()) producer.close();
    this.byTopic.clear();
  }
}
