import rhea, { type Connection, type EventContext, type Message as AmqpMessage } from 'rhea';
import { ArtemisTransport } from '@babelqueue/artemis';
import { killSockets } from '../lab.js';
import type { BrokerDriver, DriverTarget } from './driver.js';

/** Calls Artemis's management API over AMQP (the `activemq.management` address); resolves with [succeeded, JSON body]. */
async function management(target: DriverTarget, calls: readonly { resource: string; operation?: string; attribute?: string; args?: unknown[] }[]): Promise<[boolean, string][]> {
  const u = new URL(target.url);
  const connection: Connection = rhea.create_container({ id: `reliability-${process.pid}-${Date.now()}` }).connect({
    host: u.hostname,
    port: Number(u.port),
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    reconnect: false,
  });
  connection.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      connection.once('connection_open', () => resolve());
      connection.once('disconnected', (context: EventContext) => reject(context.error ?? new Error('disconnected')));
    });
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
  ports: (url) => [Number(new URL(url).port)],
  cut: async (target) => `ss -K: ${await killSockets(Number(new URL(target.url).port))} connection(s) to the AMQP acceptor`,
  async cleanup(target, queues) {
    await management(target, queues.flatMap((queue) => [
      { resource: 'broker', operation: 'destroyQueue', args: [queue, true, true] },
      { resource: 'broker', operation: 'deleteAddress', args: [queue, true] },
    ]));
  },
  chaos: { workers: 3, concurrency: 8, killEveryMs: [300, 900], redeliveryMs: 5_000 },
  maxBodyBytes: 4 << 20,
};

export default driver;
