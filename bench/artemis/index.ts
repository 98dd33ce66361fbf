/**
 * Artemis throughput through the App beside raw rhea doing the same work with
 * the same settlement, in one run. JSON out.
 *
 *   BABELQUEUE_ARTEMIS_URL=amqp://admin:admin@127.0.0.1:5673 \
 *     node --conditions=source --import tsx bench/artemis/index.ts [messages] [window]
 *
 * - publish: durable, the broker's `accepted` outcome awaited for each message,
 *   at most `window` unsettled in flight. Raw: a rhea sender with the same AMQP
 *   message (AMQP-value string body, projection); App: app.publish (builds and
 *   encodes the envelope too).
 * - consume: a receiver with credit = `window`, manual `accepted` per message.
 *   Raw: parse the JSON body, accept, top the credit up; App: app.consume with
 *   concurrency `window` and a no-op handler (version gate, decode, validate,
 *   reconcile, route, settle).
 *
 * Three rounds, the side that goes first alternating, medians (bench/support).
 */
import rhea, { type Connection, type EventContext, type Sender } from 'rhea';
import { projectArtemis, silentLogger } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { printReport } from '../support/report.js';
import { alternate, Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, encoded, URN, windowed } from '../support/workload.js';

const URL_ = process.env.BABELQUEUE_ARTEMIS_URL ?? 'amqp://admin:admin@127.0.0.1:5673';
const N = Number(process.argv[2] ?? 20_000);
const WINDOW = Number(process.argv[3] ?? 100);
const ROUNDS = 3;

const u = new URL(URL_);
const connection: Connection = rhea.create_container({ id: `bq-bench-${process.pid}` }).connect({
  host: u.hostname,
  port: Number(u.port),
  username: decodeURIComponent(u.username),
  password: decodeURIComponent(u.password),
  reconnect: false,
  tcp_no_delay: true,
} as Parameters<ReturnType<typeof rhea.create_container>['connect']>[0]);
await new Promise((resolve) => connection.once('connection_open', resolve));
const artemisUrl = URL_.replace(/^amqp:/, 'artemis:');
const queues: string[] = [];
const fresh = (label: string) => {
  const queue = benchQueue(label);
  queues.push(queue);
  return queue;
};

/** The AMQP message the binding would send, built the same way. */
function rawMessage(queue: string, i: number) {
  const { body, projection } = encoded(queue, i);
  const p = projectArtemis(projection);
  return {
    durable: true,
    body: body.toString('utf8'),
    content_type: p.content_type,
    subject: p.subject,
    message_id: p.message_id,
    correlation_id: p.correlation_id,
    creation_time: new Date(p.creation_time!),
    message_annotations: p.message_annotations,
    application_properties: p.application_properties,
  };
}

async function rawPublish(queue: string, count: number): Promise<void> {
  const sender: Sender = connection.open_sender({ target: { address: queue, capabilities: ['queue'] } });
  const pending = new Map<unknown, () => void>();
  sender.on('accepted', (context: EventContext) => {
    pending.get(context.delivery)?.();
    pending.delete(context.delivery);
  });
  await windowed(count, WINDOW, (i) => new Promise<void>((resolve) => pending.set(sender.send(rawMessage(queue, i)), resolve)));
  sender.close();
}

async function rawConsume(queue: string, count: number): Promise<void> {
  const receiver = connection.open_receiver({ source: { address: queue, capabilities: ['queue'] }, autoaccept: false, credit_window: 0 });
  let seen = 0;
  await new Promise<void>((resolve) => {
    receiver.on('message', (context: EventContext) => {
      const body = context.message!.body as string;
      JSON.parse(Buffer.from(body, 'utf8').toString('utf8'));
      context.delivery!.accept();
      if (++seen === count) resolve();
      else receiver.add_credit(1);
    });
    receiver.once('receiver_open', () => receiver.add_credit(WINDOW));
  });
  receiver.close();
}

const rounds = new Rounds();

async function rawRound(): Promise<void> {
  const queue = fresh('artemis-raw');
  await rounds.time('publishAccepted', 'raw', N, () => rawPublish(queue, N));
  await rounds.time('consumeCredit', 'raw', N, () => rawConsume(queue, N));
}

async function appRound(): Promise<void> {
  const app = benchApp(new ArtemisTransport({ url: artemisUrl, logger: silentLogger }), fresh('artemis-app'));
  await rounds.time('publishAccepted', 'app', N, () => windowed(N, WINDOW, (i) => app.publish(URN, { ...DATA, i })));
  await rounds.time('consumeCredit', 'app', N, () => app.consume({ maxMessages: N, concurrency: WINDOW, idleMs: 5000 }));
  await app.close();
}

await alternate(ROUNDS, [rawRound, appRound]);

// Remove the bench queues through Artemis's management address.
const replies = connection.open_receiver({ source: { address: '', dynamic: true } });
const replyTo = await new Promise<string>((resolve) => replies.once('receiver_open', (context: EventContext) => resolve(context.receiver!.source.address)));
const management = connection.open_sender({ target: { address: 'activemq.management' } });
for (const queue of queues) {
  const answered = new Promise((resolve) => replies.once('message', resolve));
  management.send({ reply_to: replyTo, application_properties: { _AMQ_ResourceName: 'broker', _AMQ_OperationName: 'destroyQueue' }, body: JSON.stringify([queue, true, true]) });
  await answered;
}
connection.close();
await new Promise((resolve) => setTimeout(resolve, 200));
const internal = connection as unknown as { socket?: unknown; abort_socket?: (socket: unknown) => void };
internal.abort_socket?.(internal.socket);

printReport({ bench: 'artemis', params: { messages: N, window: WINDOW, rounds: ROUNDS }, measurements: rounds.measurements() });
