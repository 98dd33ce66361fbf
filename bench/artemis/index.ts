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
 */
import rhea, { type Connection, type EventContext, type Sender } from 'rhea';
import { createApp, EnvelopeCodec, envelopeProjection, projectArtemis, silentLogger } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';

const URL_ = process.env.BABELQUEUE_ARTEMIS_URL ?? 'amqp://admin:admin@127.0.0.1:5673';
const N = Number(process.argv[2] ?? 20_000);
const WINDOW = Number(process.argv[3] ?? 100);
const ROUNDS = 3;
const URN = 'urn:babel:orders:created';
const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };

interface Sample {
  msgsPerSec: number;
  /** CPU time of this process per message (user + system), in µs: steadier than wall time on a busy machine. */
  cpuUsPerMsg: number;
}

async function timed(count: number, run: () => Promise<unknown>): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { msgsPerSec: Math.round(count / seconds), cpuUsPerMsg: Number(((used.user + used.system) / count).toFixed(1)) };
}

/** Runs `task(i)` for i < count with at most `window` in flight. */
async function windowed(count: number, window: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(window, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

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
  const queue = `bq-bench-${label}-${process.pid}-${Date.now().toString(36)}`;
  queues.push(queue);
  return queue;
};

/** The AMQP message the binding would send, built the same way. */
function rawMessage(queue: string, i: number) {
  const env = EnvelopeCodec.make(URN, { ...DATA, i }, { queue });
  const p = projectArtemis(envelopeProjection(env));
  return {
    durable: true,
    body: EnvelopeCodec.encode(env),
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

const rounds = {
  publish: { raw: [] as Sample[], app: [] as Sample[] },
  consume: { raw: [] as Sample[], app: [] as Sample[] },
};

for (let round = 0; round < ROUNDS; round++) {
  const rawQueue = fresh('raw');
  rounds.publish.raw.push(await timed(N, () => rawPublish(rawQueue, N)));
  rounds.consume.raw.push(await timed(N, () => rawConsume(rawQueue, N)));

  const appQueue = fresh('app');
  const app = createApp({ transport: new ArtemisTransport({ url: artemisUrl, logger: silentLogger }), queue: appQueue, logger: silentLogger });
  app.handle(URN, () => undefined);
  rounds.publish.app.push(await timed(N, () => windowed(N, WINDOW, () => app.publish(URN, DATA))));
  rounds.consume.app.push(await timed(N, () => app.consume({ maxMessages: N, concurrency: WINDOW, idleMs: 5000 })));
  await app.close();
}

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

const best = (xs: Sample[]) => Math.max(...xs.map((x) => x.msgsPerSec));
const leanest = (xs: Sample[]) => Math.min(...xs.map((x) => x.cpuUsPerMsg));
const summary = (name: keyof typeof rounds) => {
  const { raw, app: ours } = rounds[name];
  return {
    rawMsgsPerSec: best(raw),
    appMsgsPerSec: best(ours),
    appToRawRatio: Number((best(ours) / best(raw)).toFixed(3)),
    rawCpuUsPerMsg: leanest(raw),
    appCpuUsPerMsg: leanest(ours),
    rounds: rounds[name],
  };
};
console.log(JSON.stringify({
  bench: 'artemis',
  messages: N,
  window: WINDOW,
  publishAccepted: summary('publish'),
  consumeCredit: summary('consume'),
  node: process.version,
}, null, 2));
