/**
 * Pulsar throughput through the App beside the same WebSocket API calls made
 * raw, in one run, and the official Python SDK's native client (pulsar-client,
 * the binary protocol) as a reference figure. JSON out. The App's consumers
 * speak the binary protocol (`serviceUrl`: the lab standalone's port 6650),
 * its publishes go over the WebSocket API.
 *
 *   BABELQUEUE_PULSAR_URL=http://127.0.0.1:8080 \
 *     node --conditions=source --import tsx bench/pulsar/index.ts [messages=10000] [window=100] [rate=1000] [modes=publish,consume,run,publishMany,python,latency]
 *
 * `modes` (default all): a comma list of publish, consume, run, publishMany,
 * python, latency.
 * Without publish, consume reads a topic filled beforehand by the raw
 * producer (untimed).
 *
 * - publish: one message per frame, each awaited on its send receipt, at most
 *   `window` in flight. Raw: a producer WebSocket sending the envelope with the
 *   projection's properties; App: app.publish (builds and encodes the envelope too).
 * - consume: a Shared subscription in pull mode, `window` permits, one ack per
 *   message. Raw: parse the JSON payload and ack; App: app.consume with
 *   concurrency `window` and a no-op handler (gate, decode, validate, route, settle).
 *   A drain (`maxMessages`): the binary consumer prefetches at most what the
 *   drain may still take.
 * - run: the same work through a worker, `app.run` at concurrency `window` on a
 *   topic filled beforehand, stopped once it handled them all. Raw: the consume above.
 * - publishMany: batches of `window`, each message's send receipt awaited.
 *   Raw: the producer WebSocket above sending every frame of a batch without
 *   waiting, then awaiting all the batch's receipts; App: app.publishMany of
 *   the batch (every send first, then each receipt). Both producers are open
 *   before the clock starts.
 * - python: the Python SDK (babelqueue[pulsar]) publishing with app.publish
 *   (synchronous sends) and consuming with app.consume, on a tenth of the
 *   messages, when the interop venv (scripts/peers) is there (`reference`).
 * - latency: publish → handler at `rate` messages/s (default 1,000), each send
 *   receipt awaited, pull mode with `window` permits; p50/p99/p99.9 from each
 *   message's due time (bench/support/latency.ts). Raw: the producer and
 *   consumer WebSockets above (parse, ack, one permit per message); App:
 *   app.publish and app.run at concurrency `window`. Five rounds (`LATENCY_ROUNDS`), after
 *   the others.
 *
 * Three rounds, the side that goes first alternating, medians (bench/support).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { silentLogger } from '@babelqueue/core';
import { projectPulsar } from '@babelqueue/core/binding';
import { PulsarTransport } from '@babelqueue/pulsar';
import { appLatency, indexOf, latencyRounds } from '../support/latency.js';
import { OfferedLoad, timed, type Latency, type Sample } from '../support/measure.js';
import { latencyMeasurement, printReport } from '../support/report.js';
import { alternate, Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, encoded, publishInBatches, runUntilHandled, URN, windowed } from '../support/workload.js';

const WEB = process.env.BABELQUEUE_PULSAR_URL ?? 'http://127.0.0.1:8080';
/** The same broker's binary-protocol service, where the App's consumers connect (the lab's standalone listens on 6650). */
const SERVICE = `pulsar://${new URL(WEB).hostname}:6650`;
const appTransport = () => new PulsarTransport({ url: WEB, serviceUrl: SERVICE, logger: silentLogger });
const N = Number(process.argv[2] ?? 10_000);
const WINDOW = Number(process.argv[3] ?? 100);
const RATE = Number(process.argv[4] ?? 1000);
const LATENCY_N = RATE * 4;
const MODES = new Set((process.argv[5] ?? 'publish,consume,run,publishMany,python,latency').split(','));
const ROUNDS = 3;
const PY_N = Math.max(200, Math.floor(N / 10));
const root = join(import.meta.dirname, '..', '..');

const topics: string[] = [];
const fresh = async (label: string) => {
  const queue = benchQueue(label);
  topics.push(queue);
  const res = await fetch(`${WEB}/admin/v2/persistent/public/default/${queue}/subscription/babelqueue`, {
    method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ledgerId: -1, entryId: -1, partitionIndex: -1 }),
  });
  if (res.status !== 204) throw new Error(`cannot create the subscription on ${queue}: HTTP ${res.status}`);
  return queue;
};

function open(path: string): Promise<WebSocket> {
  const ws = new WebSocket(`${WEB.replace(/^http/, 'ws')}/ws/v2/${path}`, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Connected before the clock starts, as the App side's producer is. */
async function rawPublish(queue: string): Promise<Sample> {
  const ws = await open(`producer/persistent/public/default/${queue}`);
  let sent = 0;
  let confirmed = 0;
  const sample = await timed(N, () => new Promise<void>((resolve, reject) => {
    const send = () => {
      const { body, projection } = encoded(queue, sent);
      ws.send(JSON.stringify({ payload: body.toString('base64'), properties: projectPulsar(projection), context: String(sent++) }));
    };
    ws.on('message', (data) => {
      if (JSON.parse(data.toString()).result !== 'ok') reject(new Error('publish refused'));
      if (++confirmed === N) resolve();
      else if (sent < N) send();
    });
    while (sent < Math.min(WINDOW, N)) send();
  }));
  ws.close();
  return sample;
}

/** Batches of WINDOW: every frame of a batch sent, then all its receipts awaited. Connected before the clock starts. */
async function rawPublishBatched(queue: string): Promise<Sample> {
  const ws = await open(`producer/persistent/public/default/${queue}`);
  const receipts = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  ws.on('message', (data) => {
    const { result, context } = JSON.parse(data.toString()) as { result: string; context: string };
    const receipt = receipts.get(context);
    receipts.delete(context);
    if (result === 'ok') receipt?.resolve();
    else receipt?.reject(new Error(`publish refused: ${result}`));
  });
  const sample = await timed(N, async () => {
    for (let i = 0; i < N; i += WINDOW) {
      const batch = Array.from({ length: Math.min(WINDOW, N - i) }, (_, k) => encoded(queue, i + k));
      await Promise.all(batch.map(({ body, projection }, k) => new Promise<void>((resolve, reject) => {
        const context = String(i + k);
        receipts.set(context, { resolve, reject });
        ws.send(JSON.stringify({ payload: body.toString('base64'), properties: projectPulsar(projection), context }));
      })));
    }
  });
  ws.close();
  return sample;
}

/** Subscribing inside the clock, as the App side's consume does. */
async function rawConsume(queue: string): Promise<void> {
  const ws = await open(`consumer/persistent/public/default/${queue}/babelqueue?subscriptionType=Shared&pullMode=true&receiverQueueSize=${WINDOW}`);
  let seen = 0;
  await new Promise<void>((resolve) => {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      JSON.parse(Buffer.from(frame.payload, 'base64').toString('utf8'));
      ws.send(JSON.stringify({ messageId: frame.messageId }));
      ws.send(JSON.stringify({ type: 'permit', permitMessages: 1 }));
      if (++seen === N) resolve();
    });
    ws.send(JSON.stringify({ type: 'permit', permitMessages: WINDOW }));
  });
  await new Promise<void>((resolve) => {
    ws.once('close', () => resolve());
    ws.close();
  });
}

function pythonReference(): Record<string, unknown> {
  const python = join(process.env.BABELQUEUE_VENV ?? join(root, '.venv'), 'bin', 'python');
  if (!existsSync(python)) return { skipped: `${python} does not exist; create it with scripts/peers` };
  const queue = benchQueue('pulsar-python');
  topics.push(queue);
  const out = execFileSync(python, [join(import.meta.dirname, 'python_reference.py'), `pulsar://${new URL(WEB).hostname}:6650`, queue, String(PY_N)], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 300_000,
  });
  return JSON.parse(out) as Record<string, unknown>;
}

async function rawLatency(): Promise<Latency> {
  const queue = await fresh('pulsar-raw-latency');
  const load = new OfferedLoad(RATE, LATENCY_N);
  const consumer = await open(`consumer/persistent/public/default/${queue}/babelqueue?subscriptionType=Shared&pullMode=true&receiverQueueSize=${WINDOW}`);
  consumer.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    load.seen(indexOf(Buffer.from(frame.payload, 'base64').toString('utf8')));
    consumer.send(JSON.stringify({ messageId: frame.messageId }));
    consumer.send(JSON.stringify({ type: 'permit', permitMessages: 1 }));
  });
  consumer.send(JSON.stringify({ type: 'permit', permitMessages: WINDOW }));
  const producer = await open(`producer/persistent/public/default/${queue}`);
  const receipts = new Map<string, () => void>();
  let sent = 0;
  producer.on('message', (data) => {
    const { context } = JSON.parse(data.toString()) as { context: string };
    receipts.get(context)?.();
    receipts.delete(context);
  });
  try {
    return await load.run((i) => new Promise<void>((resolve) => {
      const { body, projection } = encoded(queue, i);
      const context = String(sent++);
      receipts.set(context, resolve);
      producer.send(JSON.stringify({ payload: body.toString('base64'), properties: projectPulsar(projection), context }));
    }));
  } finally {
    producer.close();
    consumer.close();
  }
}

const rounds = new Rounds();

async function rawRound(): Promise<void> {
  const queue = await fresh('pulsar-raw');
  if (MODES.has('publish')) rounds.add('publishConfirmed', 'raw', await rawPublish(queue));
  else if (MODES.has('consume')) await rawPublish(queue);
  if (MODES.has('consume')) await rounds.time('consumePullMode', 'raw', N, () => rawConsume(queue));
  if (MODES.has('run')) {
    const runQueue = await fresh('pulsar-raw-run');
    await rawPublish(runQueue);
    await rounds.time('run', 'raw', N, () => rawConsume(runQueue));
  }
  if (MODES.has('publishMany')) rounds.add('publishMany', 'raw', await rawPublishBatched(await fresh('pulsar-raw-batch')));
}

async function appRound(): Promise<void> {
  const queue = await fresh('pulsar-app');
  const app = benchApp(appTransport(), queue);
  await app.publish(URN, DATA); // opens the producer, as the raw side's open is not timed either
  if (MODES.has('publish')) await rounds.time('publishConfirmed', 'app', N, () => windowed(N, WINDOW, (i) => app.publish(URN, { ...DATA, i })));
  else if (MODES.has('consume')) await rawPublish(queue);
  if (MODES.has('consume')) await rounds.time('consumePullMode', 'app', N + 1, () => app.consume({ maxMessages: N + 1, concurrency: WINDOW, idleMs: 10_000 }));
  await app.close();
  if (MODES.has('run')) {
    const runQueue = await fresh('pulsar-app-run');
    await rawPublish(runQueue);
    await rounds.time('run', 'app', N, () => runUntilHandled(appTransport(), runQueue, N, WINDOW));
  }
  if (MODES.has('publishMany')) {
    const batcher = benchApp(appTransport(), await fresh('pulsar-app-batch'));
    await batcher.publish(URN, DATA); // opens the producer, as the raw side's open is not timed either
    await rounds.time('publishMany', 'app', N, () => publishInBatches(batcher, N, WINDOW));
    await batcher.close();
  }
}

const throughput = MODES.has('publish') || MODES.has('consume') || MODES.has('run') || MODES.has('publishMany');
if (throughput) await alternate(ROUNDS, [rawRound, appRound]);
const appSideLatency = async () =>
  appLatency(appTransport(), await fresh('pulsar-app-latency'), new OfferedLoad(RATE, LATENCY_N), WINDOW);
const latency = MODES.has('latency') ? await latencyRounds(rawLatency, appSideLatency, !throughput) : undefined;
const python = MODES.has('python') ? pythonReference() : { skipped: 'not among the modes' };

for (const queue of topics) {
  await fetch(`${WEB}/admin/v2/persistent/public/default/${queue}?force=true`, { method: 'DELETE' }).catch(() => undefined);
}

printReport({
  bench: 'pulsar',
  params: { messages: N, window: WINDOW, rounds: ROUNDS },
  measurements: [...rounds.measurements(), ...(latency !== undefined ? [latencyMeasurement('latency', RATE, latency)] : [])],
  reference: { pythonSdkNativeClient: { ...python, note: `the official Python SDK's native client on ${PY_N} messages, not App beside raw` } },
});
