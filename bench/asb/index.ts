/**
 * Azure Service Bus throughput through the App beside the raw @azure/service-bus
 * client doing the same work with the same settlement, in one run. JSON out.
 * Against the Service Bus stand-in (test/support/asb-standin), not Service Bus:
 * the figures compare the two clients on one machine, they say nothing about a
 * real namespace.
 *
 *   scripts/brokers up asb
 *   BABELQUEUE_ASB_URL='Endpoint=sb://127.0.0.1:5680;SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true' \
 *     node --conditions=source --import tsx bench/asb/index.ts [messages=5000] [window=100] [rate=1000] [modes=publish,consume,run,publishMany,latency]
 *
 * `modes` (default all): a comma list of publish, consume, run, publishMany,
 * latency. Without publish, consume reads a queue filled beforehand by the raw
 * sender (untimed). Three alternating rounds, medians (bench/support).
 * - publish: one message per send, at most `window` sends in flight. Raw:
 *   ServiceBusSender.sendMessages of an envelope made and encoded per message,
 *   with the binding's projection; App: app.publish (the same, through the runtime).
 * - publishMany: batches of `window`, one after the other. Raw:
 *   createMessageBatch + tryAddMessage (a new batch when one is full) +
 *   sendMessages, envelopes made and encoded per message; App: app.publishMany.
 * - consume: PeekLock, complete per message, at most `window` locked at once.
 *   Raw: receiveMessages for the free slots, JSON.parse, completeMessage; App:
 *   app.consume with a no-op handler (version gate, decode, validate, route, settle).
 *   A drain (`maxMessages`): the binding pulls with `receiveMessages`, as raw does.
 * - run: the same work through a worker, `app.run` at concurrency `window` on a
 *   queue filled beforehand, stopped once it handled them all: the binding's
 *   streaming receiver (`subscribe`). Raw: the consume above.
 * - latency: publish → handler at `rate` messages/s (default 1,000), one send
 *   per message, PeekLock and complete per message, at most `window` locked;
 *   p50/p99/p99.9 from each message's due time (bench/support/latency.ts).
 *   Raw: ServiceBusSender.sendMessages + the SDK's streaming receiver
 *   (`subscribe`, maxConcurrentCalls `window`, JSON.parse, completeMessage):
 *   its `receiveMessages(n)`, which the raw consume uses, waits up to a second
 *   after the first message when fewer than n are there, so a loop on it would
 *   measure that wait; App: app.publish + app.run at concurrency `window`.
 *   Five rounds (`LATENCY_ROUNDS`), after the others.
 */
import { ServiceBusClient } from '@azure/service-bus';
import { silentLogger } from '@babelqueue/core';
import { AzureServiceBusTransport, toServiceBusMessage } from '@babelqueue/azure-service-bus';
import { appLatency, indexOf, latencyRounds } from '../support/latency.js';
import { OfferedLoad, type Latency } from '../support/measure.js';
import { latencyMeasurement, printReport } from '../support/report.js';
import { alternate, Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, encoded, publishInBatches, runUntilHandled, URN, windowed } from '../support/workload.js';

const CONNECTION_STRING = process.env.BABELQUEUE_ASB_URL
  ?? 'Endpoint=sb://127.0.0.1:5680;SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true';
const N = Number(process.argv[2] ?? 5_000);
const WINDOW = Number(process.argv[3] ?? 100);
const RATE = Number(process.argv[4] ?? 1000);
const LATENCY_N = RATE * 4;
const MODES = new Set((process.argv[5] ?? 'publish,consume,run,publishMany,latency').split(','));
const ROUNDS = 3;
/** A side that receives nothing for this long fails the run instead of waiting forever. */
const IDLE_MS = 10_000;

const client = new ServiceBusClient(CONNECTION_STRING);

/** Message `i` for `queue` as the binding sends it. */
function rawMessage(queue: string, i: number) {
  const { body, projection } = encoded(queue, i);
  return toServiceBusMessage(body, projection);
}

async function rawPublish(queue: string, count: number): Promise<void> {
  const sender = client.createSender(queue);
  await windowed(count, WINDOW, (i) => sender.sendMessages(rawMessage(queue, i)));
  await sender.close();
}

async function rawPublishMany(sender: ReturnType<ServiceBusClient['createSender']>, queue: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += WINDOW) {
    let batch = await sender.createMessageBatch();
    for (let k = i; k < Math.min(i + WINDOW, count); k++) {
      const message = rawMessage(queue, k);
      if (batch.tryAddMessage(message)) continue;
      await sender.sendMessages(batch);
      batch = await sender.createMessageBatch();
      if (!batch.tryAddMessage(message)) throw new Error('a message does not fit an empty batch');
    }
    if (batch.count > 0) await sender.sendMessages(batch);
  }
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

/** Deletes what a publish-only measurement left on `queue`, so the broker does not keep it. */
async function discard(queue: string, count: number): Promise<void> {
  const receiver = client.createReceiver(queue, { receiveMode: 'receiveAndDelete', skipParsingBodyAsJson: true });
  for (let left = count; left > 0; ) {
    const batch = await receiver.receiveMessages(Math.min(left, 500), { maxWaitTimeInMs: 1000 });
    if (batch.length === 0) break;
    left -= batch.length;
  }
  await receiver.close();
}

/**
 * The App side's transport: one for the whole run and connected before the
 * rounds (the AMQP connection and its CBS token), as the raw side's client is;
 * each round's App is bound to its own queue on it.
 */
const appTransport = new AzureServiceBusTransport({ connectionString: CONNECTION_STRING, logger: silentLogger });
await appTransport.connect({ timeoutMs: 10_000 });

async function rawLatency(): Promise<Latency> {
  const queue = benchQueue('asb-raw-latency');
  const load = new OfferedLoad(RATE, LATENCY_N);
  const receiver = client.createReceiver(queue, { receiveMode: 'peekLock', skipParsingBodyAsJson: true });
  const subscription = receiver.subscribe({
    processMessage: async (message) => {
      load.seen(indexOf((message.body as Buffer).toString('utf8')));
      await receiver.completeMessage(message);
    },
    // A failed receive or settlement shows in the result as messages not handled in time.
    processError: async () => undefined,
  }, { autoCompleteMessages: false, maxConcurrentCalls: WINDOW });
  const sender = client.createSender(queue);
  try {
    return await load.run((i) => sender.sendMessages(rawMessage(queue, i)));
  } finally {
    await subscription.close();
    await sender.close();
    await receiver.close();
  }
}

const rounds = new Rounds();
// The raw client's connection open before any round, as the App's is before its clock.
const warm = client.createSender(benchQueue('asb-raw-warm'));
await warm.createMessageBatch();
await warm.close();

async function rawRound(): Promise<void> {
  const queue = benchQueue('asb-raw');
  if (MODES.has('publish')) await rounds.time('publish', 'raw', N, () => rawPublish(queue, N));
  else if (MODES.has('consume')) await rawPublish(queue, N);
  if (MODES.has('consume')) await rounds.time('consume', 'raw', N, () => rawConsume(queue, N));
  else if (MODES.has('publish')) await discard(queue, N);
  if (MODES.has('run')) {
    const runQueue = benchQueue('asb-raw-run');
    await rawPublish(runQueue, N);
    await rounds.time('run', 'raw', N, () => rawConsume(runQueue, N));
  }
  if (!MODES.has('publishMany')) return;
  // The sender's link open before the clock starts, as the App side's is.
  const manyQueue = benchQueue('asb-raw-many');
  const sender = client.createSender(manyQueue);
  await sender.sendMessages({ body: Buffer.from('{}') });
  await rounds.time('publishMany', 'raw', N, () => rawPublishMany(sender, manyQueue, N));
  await sender.close();
  await discard(manyQueue, N + 1);
}

async function appRound(): Promise<void> {
  const queue = benchQueue('asb-app');
  // Each side's sender link for the queue opens inside the clock.
  const ours = benchApp(appTransport, queue);
  if (MODES.has('publish')) await rounds.time('publish', 'app', N, () => windowed(N, WINDOW, (i) => ours.publish(URN, { ...DATA, i })));
  else if (MODES.has('consume')) await rawPublish(queue, N);
  if (MODES.has('consume')) {
    await rounds.time('consume', 'app', N, async () => {
      const handled = await ours.consume({ maxMessages: N, concurrency: WINDOW, idleMs: IDLE_MS });
      if (handled !== N) throw new Error(`App consume: nothing for ${IDLE_MS} ms after ${handled} of ${N}`);
    });
  } else if (MODES.has('publish')) await discard(queue, N);
  if (MODES.has('run')) {
    const runQueue = benchQueue('asb-app-run');
    await rawPublish(runQueue, N);
    await rounds.time('run', 'app', N, () => runUntilHandled(new AzureServiceBusTransport({ connectionString: CONNECTION_STRING, logger: silentLogger }), runQueue, N, WINDOW));
  }
  if (!MODES.has('publishMany')) return;
  // The sender's link open before the clock starts, as the raw side's is.
  const manyQueue = benchQueue('asb-app-many');
  const many = benchApp(appTransport, manyQueue);
  await many.publish(URN, DATA);
  await rounds.time('publishMany', 'app', N, () => publishInBatches(many, N, WINDOW));
  await discard(manyQueue, N + 1);
}

const throughput = MODES.has('publish') || MODES.has('consume') || MODES.has('run') || MODES.has('publishMany');
if (throughput) await alternate(ROUNDS, [rawRound, appRound]);
const appSideLatency = () => appLatency(
  new AzureServiceBusTransport({ connectionString: CONNECTION_STRING, logger: silentLogger }), benchQueue('asb-app-latency'), new OfferedLoad(RATE, LATENCY_N), WINDOW);
const latency = MODES.has('latency') ? await latencyRounds(rawLatency, appSideLatency, !throughput) : undefined;
await appTransport.close();
await client.close();

printReport({
  bench: 'asb',
  params: { broker: 'the Service Bus stand-in (test/support/asb-standin), not Service Bus', messages: N, window: WINDOW, rounds: ROUNDS },
  measurements: [...rounds.measurements(), ...(latency !== undefined ? [latencyMeasurement('latency', RATE, latency)] : [])],
});
