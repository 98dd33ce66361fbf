/**
 * Artemis throughput through the App beside raw rhea doing the same work with
 * the same settlement, in one run. JSON out.
 *
 *   BABELQUEUE_ARTEMIS_URL=amqp://admin:admin@127.0.0.1:5673 \
 *     node --conditions=source --import tsx bench/artemis/index.ts [messages=20000] [window=100] [rate=1000] [modes=publish,consume,publishMany,latency]
 *
 * `modes` (default all): a comma list of publish, consume, publishMany, latency. Without
 * publish, consume reads a queue filled beforehand by raw rhea (untimed).
 *
 * - publish: durable, the broker's `accepted` outcome awaited for each message,
 *   at most `window` unsettled in flight. Raw: a rhea sender with the same AMQP
 *   message (AMQP-value string body, projection); App: app.publish (builds and
 *   encodes the envelope too).
 * - consume: a receiver with credit = `window`, manual `accepted` per message.
 *   Raw: parse the JSON body, accept, top the credit up; App: app.consume with
 *   concurrency `window` and a no-op handler (version gate, decode, validate,
 *   reconcile, route, settle).
 * - publishMany: batches of `window`, durable, every message's outcome awaited.
 *   Raw: the rhea sender above sending every message of a batch within its
 *   credit, then awaiting each one's disposition; App: app.publishMany of the
 *   batch (every send first, then each outcome). The App's connection is
 *   made before the clock starts, as raw rhea's is; each side opens its
 *   sending link inside it.
 * - latency: publish → handler at `rate` messages/s (default 1,000), each
 *   send's `accepted` awaited, credit `window`; p50/p99/p99.9 from each
 *   message's due time (bench/support/latency.ts). Raw: the sender and
 *   receiver above (parse, accept, one credit per message); App: app.publish
 *   and app.consume at concurrency `window`. Five rounds (`LATENCY_ROUNDS`), after the others.
 *
 * Three rounds, the side that goes first alternating, medians (bench/support).
 */
import rhea, { type Connection, type EventContext, type Sender } from 'rhea';
import { silentLogger } from '@babelqueue/core';
import { projectArtemis } from '@babelqueue/core/binding';
import { ArtemisTransport } from '@babelqueue/artemis';
import { appLatency, indexOf, latencyRounds } from '../support/latency.js';
import { OfferedLoad, type Latency } from '../support/measure.js';
import { latencyMeasurement, printReport } from '../support/report.js';
import { alternate, Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, encoded, publishInBatches, URN, windowed } from '../support/workload.js';

const URL_ = process.env.BABELQUEUE_ARTEMIS_URL ?? 'amqp://admin:admin@127.0.0.1:5673';
const N = Number(process.argv[2] ?? 20_000);
const WINDOW = Number(process.argv[3] ?? 100);
const RATE = Number(process.argv[4] ?? 1000);
const LATENCY_N = RATE * 4;
const MODES = new Set((process.argv[5] ?? 'publish,consume,publishMany,latency').split(','));
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

/** Batches of WINDOW: every message of a batch sent while the link has credit, then every disposition awaited. */
async function rawPublishBatched(queue: string, count: number): Promise<void> {
  const sender: Sender = connection.open_sender({ target: { address: queue, capabilities: ['queue'] } });
  const pending = new Map<unknown, { resolve: () => void; reject: (error: Error) => void }>();
  const settle = (outcome: string) => (context: EventContext) => {
    const send = pending.get(context.delivery);
    pending.delete(context.delivery);
    if (outcome === 'accepted') send?.resolve();
    else send?.reject(new Error(`publish ${outcome}`));
  };
  for (const outcome of ['accepted', 'rejected', 'released']) sender.on(outcome, settle(outcome));
  for (let i = 0; i < count; i += WINDOW) {
    const batch = Array.from({ length: Math.min(WINDOW, count - i) }, (_, k) => rawMessage(queue, i + k));
    const outcomes: Promise<void>[] = [];
    for (const message of batch) {
      if (!sender.sendable()) await new Promise((resolve) => sender.once('sendable', resolve));
      outcomes.push(new Promise<void>((resolve, reject) => pending.set(sender.send(message), { resolve, reject })));
    }
    await Promise.all(outcomes);
  }
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

async function rawLatency(): Promise<Latency> {
  const queue = fresh('artemis-raw-latency');
  const load = new OfferedLoad(RATE, LATENCY_N);
  const receiver = connection.open_receiver({ source: { address: queue, capabilities: ['queue'] }, autoaccept: false, credit_window: 0 });
  receiver.on('message', (context: EventContext) => {
    load.seen(indexOf(Buffer.from(context.message!.body as string, 'utf8').toString('utf8')));
    context.delivery!.accept();
    receiver.add_credit(1);
  });
  await new Promise((resolve) => receiver.once('receiver_open', resolve));
  receiver.add_credit(WINDOW);
  const sender: Sender = connection.open_sender({ target: { address: queue, capabilities: ['queue'] } });
  const pending = new Map<unknown, () => void>();
  sender.on('accepted', (context: EventContext) => {
    pending.get(context.delivery)?.();
    pending.delete(context.delivery);
  });
  try {
    return await load.run((i) => new Promise<void>((resolve) => pending.set(sender.send(rawMessage(queue, i)), resolve)));
  } finally {
    sender.close();
    receiver.close();
  }
}

const rounds = new Rounds();

async function rawRound(): Promise<void> {
  const queue = fresh('artemis-raw');
  if (MODES.has('publish')) await rounds.time('publishAccepted', 'raw', N, () => rawPublish(queue, N));
  else if (MODES.has('consume')) await rawPublish(queue, N);
  if (MODES.has('consume')) await rounds.time('consumeCredit', 'raw', N, () => rawConsume(queue, N));
  if (MODES.has('publishMany')) await rounds.time('publishMany', 'raw', N, () => rawPublishBatched(fresh('artemis-raw-batch'), N));
}

async function appRound(): Promise<void> {
  const queue = fresh('artemis-app');
  const app = benchApp(new ArtemisTransport({ url: artemisUrl, logger: silentLogger }), queue);
  if (MODES.has('publish')) await rounds.time('publishAccepted', 'app', N, () => windowed(N, WINDOW, (i) => app.publish(URN, { ...DATA, i })));
  else if (MODES.has('consume')) await rawPublish(queue, N);
  if (MODES.has('consume')) await rounds.time('consumeCredit', 'app', N, () => app.consume({ maxMessages: N, concurrency: WINDOW, idleMs: 5000 }));
  await app.close();
  if (MODES.has('publishMany')) {
    const transport = new ArtemisTransport({ url: artemisUrl, logger: silentLogger });
    await transport.connect({ timeoutMs: 10_000 }); // connected before the clock, as the raw side's connection is
    const batcher = benchApp(transport, fresh('artemis-app-batch'));
    await rounds.time('publishMany', 'app', N, () => publishInBatches(batcher, N, WINDOW));
    await batcher.close();
  }
}

const throughput = MODES.has('publish') || MODES.has('consume') || MODES.has('publishMany');
if (throughput) await alternate(ROUNDS, [rawRound, appRound]);
const appSideLatency = () =>
  appLatency(new ArtemisTransport({ url: artemisUrl, logger: silentLogger }), fresh('artemis-app-latency'), new OfferedLoad(RATE, LATENCY_N), WINDOW);
const latency = MODES.has('latency') ? await latencyRounds(rawLatency, appSideLatency, !throughput) : undefined;

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

printReport({
  bench: 'artemis',
  params: { messages: N, window: WINDOW, rounds: ROUNDS },
  measurements: [...rounds.measurements(), ...(latency !== undefined ? [latencyMeasurement('latency', RATE, latency)] : [])],
});
