import rhea, { type Connection, type EventContext, type Message as AmqpMessage, type Receiver, type Sender } from 'rhea';
import { EnvelopeCodec, type JsonObject } from '@babelqueue/core';
import { type EnvelopeProjection } from '@babelqueue/core/binding';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';

export { uniqueQueue };
export { captureLogger } from '../../../../test/support/capture-logger.js';

/** The Artemis suite: `artemis.url` is the lab broker, `artemis.skip` goes to `describe`. */
export const artemis = broker('artemis');

/** The lab URL in the Python SDK's spelling (`artemis://user:pass@host:port`). */
export function artemisUrl(url = artemis.url!): string {
  return url.replace(/^amqp:/, 'artemis:').replace(/^amqps:/, 'artemis+ssl:');
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A message read back by a plain rhea receiver, with its delivery-time of arrival. */
export interface Taken {
  readonly message: AmqpMessage;
  readonly body: Buffer;
}

/**
 * A plain rhea connection for putting messages on the broker as another
 * producer would and reading back what the binding wrote, plus Artemis's
 * management API over AMQP (message counts, address settings, clean-up).
 */
export class Raw {
  private constructor(readonly connection: Connection, private readonly replies: Receiver, private readonly replyTo: string, private readonly management: Sender) {}

  static async open(url = artemis.url!): Promise<Raw> {
    const u = new URL(url);
    const connection = rhea.create_container({ id: `bq-test-raw-${process.pid}` }).connect({
      host: u.hostname,
      port: Number(u.port),
      username: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      reconnect: false,
    });
    connection.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      connection.once('connection_open', () => resolve());
      connection.once('disconnected', (context: EventContext) => reject(context.error ?? new Error('disconnected')));
    });
    const replies = connection.open_receiver({ source: { address: '', dynamic: true }, autoaccept: true });
    const replyTo = await new Promise<string>((resolve) =>
      replies.once('receiver_open', (context: EventContext) => resolve(context.receiver!.source.address)));
    const management = connection.open_sender({ target: { address: 'activemq.management' } });
    return new Raw(connection, replies, replyTo, management);
  }

  /** Sends `message` to the anycast queue and waits until the broker accepted it. */
  async send(queue: string, message: AmqpMessage): Promise<void> {
    const sender = this.connection.open_sender({ target: { address: queue, capabilities: ['queue'] } });
    try {
      await new Promise<void>((resolve, reject) => {
        const delivery = sender.send(message);
        sender.on('accepted', (context: EventContext) => context.delivery === delivery && resolve());
        sender.on('rejected', (context: EventContext) => context.delivery === delivery && reject(new Error('rejected')));
        sender.on('released', (context: EventContext) => context.delivery === delivery && reject(new Error('released')));
      });
    } finally {
      sender.close();
    }
  }

  /**
   * Takes (and accepts) every message waiting on `queue`, oldest first: drains
   * the link again until a drain brings nothing. Under load Artemis can answer a
   * drain while deliveries are still on their way; one that arrives once the
   * take is over is left unaccepted, so the broker keeps it (never lost unseen).
   */
  async take(queue: string): Promise<Taken[]> {
    const receiver = this.connection.open_receiver({ source: { address: queue, capabilities: ['queue'] }, autoaccept: false, credit_window: 0 });
    const out: Taken[] = [];
    let over = false;
    receiver.on('message', (context: EventContext) => {
      if (over) return;
      context.delivery!.accept();
      const m = context.message!;
      const body = typeof m.body === 'string' ? Buffer.from(m.body, 'utf8') : Buffer.from((m.body as { content: Uint8Array }).content);
      out.push({ message: m, body });
    });
    await new Promise<void>((resolve) => receiver.once('receiver_open', () => resolve()));
    for (let before = -1; out.length !== before; ) {
      before = out.length;
      await new Promise<void>((resolve) => {
        receiver.once('receiver_drained', () => resolve());
        receiver.drain = true;
        receiver.add_credit(1000);
      });
    }
    over = true;
    receiver.close();
    return out;
  }

  /** Messages on `queue` (scheduled ones included; 0 when it does not exist). */
  async count(queue: string): Promise<number> {
    const [ok, body] = await this.call(`queue.${queue}`, { attribute: 'messageCount' });
    return ok ? Number(JSON.parse(body)[0]) : 0;
  }

  /**
   * Waits until `queue` holds `n` messages. Use it after a consumer settled: Artemis lowers its count
   * only once the acknowledgement is journalled, which can be after the consumer has closed.
   */
  async waitForCount(queue: string, n: number, timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while ((await this.count(queue)) !== n) {
      if (Date.now() > until) throw new Error(`${queue} did not reach ${n} messages in ${timeoutMs} ms (has ${await this.count(queue)})`);
      await sleep(25);
    }
  }

  /** Calls a broker management operation (or reads an attribute); resolves with [succeeded, JSON body]. */
  async call(resource: string, what: { operation?: string; attribute?: string; args?: unknown[] }): Promise<[boolean, string]> {
    const id = `${Date.now()}-${Math.random()}`;
    const properties: Record<string, unknown> = { _AMQ_ResourceName: resource };
    if (what.operation !== undefined) properties._AMQ_OperationName = what.operation;
    if (what.attribute !== undefined) properties._AMQ_Attribute = what.attribute;
    const reply = new Promise<AmqpMessage>((resolve) => {
      const onMessage = (context: EventContext) => {
        if (context.message?.correlation_id !== id) return;
        this.replies.removeListener('message', onMessage);
        resolve(context.message);
      };
      this.replies.on('message', onMessage);
    });
    this.management.send({ reply_to: this.replyTo, message_id: id, application_properties: properties, body: JSON.stringify(what.args ?? []) });
    const message = await reply;
    return [message.application_properties?._AMQ_OperationSucceeded === true, String(message.body ?? 'null')];
  }

  /** Makes `address` refuse further sends once it holds about 1 KiB (address-full policy FAIL). */
  async limitAddress(address: string): Promise<void> {
    const settings = JSON.stringify({ maxSizeBytes: 1024, pageSizeBytes: 512, addressFullMessagePolicy: 'FAIL' });
    const [ok, body] = await this.call('broker', { operation: 'addAddressSettings', args: [address, settings] });
    if (!ok) throw new Error(`addAddressSettings failed: ${body}`);
  }

  /** Drops the settings of {@link limitAddress}. */
  async unlimitAddress(address: string): Promise<void> {
    await this.call('broker', { operation: 'removeAddressSettings', args: [address] });
  }

  /** Deletes queues (and their addresses) a test created. */
  async cleanup(...queues: string[]): Promise<void> {
    for (const queue of queues) {
      await this.call('broker', { operation: 'destroyQueue', args: [queue, true, true] });
      await this.call('broker', { operation: 'deleteAddress', args: [queue, true] });
    }
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.connection.once('connection_close', () => resolve()));
    this.connection.close();
    await Promise.race([closed, sleep(2000)]);
    const internal = this.connection as unknown as { socket?: unknown; abort_socket?: (socket: unknown) => void };
    internal.abort_socket?.(internal.socket);
  }
}

/** A freshly made envelope, its encoded bytes and its projection. */
export function envelope(urn: string, data: JsonObject, queue: string) {
  const env = EnvelopeCodec.make(urn, data, { queue });
  const body = Buffer.from(EnvelopeCodec.encode(env), 'utf8');
  const projection: EnvelopeProjection = {
    urn: env.job,
    traceId: env.trace_id,
    messageId: env.meta.id,
    schemaVersion: env.meta.schema_version,
    lang: env.meta.lang,
    createdAt: env.meta.created_at,
    attempts: env.attempts,
  };
  return { env, body, projection };
}
