import rhea, { type Connection, type EventContext, type Message as AmqpMessage } from 'rhea';
import { ArtemisTransport, parseArtemisUrls, type ArtemisEndpoint } from '@babelqueue/artemis';
import { killSockets } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

type Call = { resource: string; operation?: string; attribute?: string; args?: unknown[] };

/**
 * Calls Artemis's management API over AMQP (the `activemq.management` address) on the first
 * broker of the URL that takes a connection (a failover list: the active one of a pair);
 * resolves with [succeeded, JSON body] per call.
 */
async function management(target: DriverTarget, calls: readonly Call[]): Promise<[boolean, string][]> {
  return (await activeBroker(target, calls)).results;
}

/** The first broker of the URL that takes a connection (its 1-based place in the list), and the answers to `calls` from it. */
async function activeBroker(target: DriverTarget, calls: readonly Call[]): Promise<{ node: number; results: [boolean, string][] }> {
  const endpoints = parseArtemisUrls(target.url);
  let last: unknown;
  for (const [index, endpoint] of endpoints.entries()) {
    let connection: Connection;
    try {
      connection = await open(endpoint);
    } catch (error) {
      last = error;
      continue;
    }
    return { node: index + 1, results: await callAll(connection, calls) };
  }
  throw last instanceof Error ? last : new Error('no Artemis broker of the URL takes a connection');
}

async function open(endpoint: ArtemisEndpoint): Promise<Connection> {
  const connection: Connection = rhea.create_container({ id: `reliability-${process.pid}-${Date.now()}` }).connect({
    host: endpoint.host,
    port: endpoint.port,
    ...(endpoint.username === undefined ? {} : { username: endpoint.username, password: endpoint.password ?? '' }),
    reconnect: false,
  });
  connection.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    connection.once('connection_open', () => resolve());
    connection.once('disconnected', (context: EventContext) => reject(context.error ?? new Error('disconnected')));
  });
  return connection;
}

async function callAll(connection: Connection, calls: readonly Call[]): Promise<[boolean, string][]> {
  try {
    const replies = connection.open_receiver({ source: { address: '', dynamic: true }, autoaccept: true });
    const replyTo = await new Promise<string>((resolve) => replies.once('receiver_open', (context: EventContext) => resolve(context.receiver!.source.address)));
    const sender = connection.open_sender({ target: { address: 'activemq.management' } });
    const out: [boolean, string][] = [];
    for (const call of calls) {
      const id = `${Date.now()}-${Math.random()}`;
      const reply = new Promise<AmqpMessage>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('artemis management did not answer')), 15_000);
        const onMessage = (context: EventContext) => {
          if (context.message?.correlation_id !== id) return;
          clearTimeout(timer);
          replies.removeListener('message', onMessage);
          resolve(context.message);
        };
        replies.on('message', onMessage);
      });
      const properties: Record<string, unknown> = { _AMQ_ResourceName: call.resource };
      if (call.operation !== undefined) properties._AMQ_OperationName = call.operation;
      if (call.attribute !== undefined) properties._AMQ_Attribute = call.attribute;
      sender.send({ reply_to: replyTo, message_id: id, application_properties: properties, body: JSON.stringify(call.args ?? []) });
      const message = await reply;
      out.push([message.application_properties?._AMQ_OperationSucceeded === true, String(message.body ?? 'null')]);
    }
    return out;
  } finally {
    connection.close();
  }
}

const driver: BrokerDriver = {
  name: 'artemis',
  lab: 'artemis',
  description: 'ActiveMQ Artemis 2.40 over AMQP 1.0 (anycast queues)',
  transport: (target) => new ArtemisTransport({ url: target.url, logger: target.logger, reconnect: { initialDelayMs: 100, maxDelayMs: 2000, multiplier: 2 } }),
  queue: (base) => base,
  // messageCount counts every message of the queue: ready, delivered and not settled, and scheduled.
  async leftover(target, queue) {
    const [[ok, body]] = (await management(target, [{ resource: `queue.${queue}`, attribute: 'messageCount' }])) as [[boolean, string]];
    return { messages: ok ? Number(JSON.parse(body)[0]) : 0 };
  },
  ports: (url) => parseArtemisUrls(url).map((endpoint) => endpoint.port),
  async cut(target) {
    let cut = 0;
    for (const port of driver.ports(target.url)) cut += await killSockets(port);
    return `ss -K: ${cut} connection(s) to the AMQP acceptor`;
  },
  async cleanup(target, queues) {
    await management(target, queues.flatMap((queue) => [
      { resource: 'broker', operation: 'destroyQueue', args: [queue, true, true] },
      { resource: 'broker', operation: 'deleteAddress', args: [queue, true] },
    ]));
  },
  chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: 5_000 },
  maxBodyBytes: 4 << 20,
};

/** The 1-based place in the URL's list of the broker that takes connections now (on a pair: the active one). */
export async function activeNode(target: DriverTarget): Promise<number> {
  return (await activeBroker(target, [])).node;
}

export default driver;
