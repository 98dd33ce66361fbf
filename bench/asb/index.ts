/**
 * Azure Service Bus throughput through the App beside the raw @azure/service-bus
 * client doing the same work with the same settlement, in one run. JSON out.
 * Against the Service Bus stand-in (test/support/asb-standin), not Service Bus:
 * the figures compare the two clients on one machine, they say nothing about a
 * real namespace.
 *
 *   scripts/brokers up asb
 *   BABELQUEUE_ASB_URL='Endpoint=sb://127.0.0.1:5680;SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true' \
 *     node --conditions=source --import tsx bench/asb/index.ts [messages] [window]
 *
 * Best of three rounds, the two sides taking turns going first.
 * - publish: one message per send, at most `window` sends in flight. Raw:
 *   ServiceBusSender.sendMessages of an envelope made and encoded per message,
 *   with the binding's projection; App: app.publish (the same, through the runtime).
 * - consume: PeekLock, complete per message, at most `window` locked at once.
 *   Raw: receiveMessages for the free slots, JSON.parse, completeMessage; App:
 *   app.consume with a no-op handler (version gate, decode, validate, route, settle).
 */
import { ServiceBusClient } from '@azure/service-bus';
import { createApp, EnvelopeCodec, silentLogger } from '@babelqueue/core';
import { AzureServiceBusTransport, toServiceBusMessage } from '@babelqueue/azure-service-bus';

const CONNECTION_STRING = process.env.BABELQUEUE_ASB_URL
  ?? 'Endpoint=sb://127.0.0.1:5680;SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true';
const N = Number(process.argv[2] ?? 5_000);
const WINDOW = Number(process.argv[3] ?? 100);
const ROUNDS = 3;
/** A side that receives nothing for this long fails the run instead of waiting forever. */
const IDLE_MS = 10_000;
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

const client = new ServiceBusClient(CONNECTION_STRING);
const fresh = (label: string) => `bq-bench-asb-${label}-${process.pid}-${Date.now().toString(36)}`;

async function rawPublish(queue: string, count: number): Promise<void> {
  const sender = client.createSender(queue);
  await windowed(count, WINDOW, (i) => {
    const env = EnvelopeCodec.make(URN, { ...DATA, i }, { queue });
    const projection = {
      urn: env.job, traceId: env.trace_id, messageId: env.meta.id, schemaVersion: env.meta.schema_version,
      lang: env.meta.lang, createdAt: env.meta.created_at, attempts: env.attempts,
    };
    return sender.sendMessages(toServiceBusMessage(Buffer.from(EnvelopeCodec.encode(env)), projection));
  });
  await sender.close();
}

async function rawConsume(queue: string, count: number): Promise<void> {
  const receiver = client.createReceiver(queue, { receiveMode: 'peekLock', skipParsingBodyAsJson: true });
  const inFlight = new Set<Promise<void>>();
  let received = 0;
  let lastMessage = Date.now();
  while (received < count) {
    const free = Math.min(WINDOW - inFlight.size, count - received);
    if (free === 0) {
      await Promise.race(inFlight);
      continue;
    }
    const batch = await receiver.receiveMessages(free, { maxWaitTimeInMs: 1000 });
    if (batch.length > 0) lastMessage = Date.now();
    else if (Date.now() - lastMessage > IDLE_MS) throw new Error(`raw consume: nothing for ${IDLE_MS} ms after ${received} of ${count}`);
    for (const message of batch) {
      received += 1;
      JSON.parse((message.body as Buffer).toString('utf8'));
      const settle: Promise<void> = receiver.completeMessage(message).finally(() => inFlight.delete(settle));
      inFlight.add(settle);
    }
  }
  await Promise.all(inFlight);
  await receiver.close();
}

function app(queue: string) {
  const transport = new AzureServiceBusTransport({ connectionString: CONNECTION_STRING, logger: silentLogger });
  const instance = createApp({ transport, queue, logger: silentLogger });
  instance.handle(URN, () => undefined);
  return instance;
}

const rounds = {
  publish: { raw: [] as Sample[], app: [] as Sample[] },
  consume: { raw: [] as Sample[], app: [] as Sample[] },
};

async function rawRound(): Promise<void> {
  const queue = fresh('raw');
  rounds.publish.raw.push(await timed(N, () => rawPublish(queue, N)));
  rounds.consume.raw.push(await timed(N, () => rawConsume(queue, N)));
}

async function appRound(): Promise<void> {
  const ours = app(fresh('app'));
  rounds.publish.app.push(await timed(N, () => windowed(N, WINDOW, () => ours.publish(URN, DATA))));
  rounds.consume.app.push(await timed(N, async () => {
    const handled = await ours.consume({ maxMessages: N, concurrency: WINDOW, idleMs: IDLE_MS });
    if (handled !== N) throw new Error(`App consume: nothing for ${IDLE_MS} ms after ${handled} of ${N}`);
  }));
  await ours.close();
}

// The two sides take turns going first, so neither always gets the colder start.
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    await rawRound();
    await appRound();
  } else {
    await appRound();
    await rawRound();
  }
}
await client.close();

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
  bench: 'asb',
  broker: 'the Service Bus stand-in (test/support/asb-standin), not Service Bus',
  messages: N,
  window: WINDOW,
  publish: summary('publish'),
  consume: summary('consume'),
  node: process.version,
}, null, 2));
