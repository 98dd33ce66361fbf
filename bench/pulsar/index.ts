/**
 * Pulsar throughput through the App beside the same WebSocket API calls made
 * raw, in one run, and the official Python SDK's native client (pulsar-client,
 * the binary protocol) as a reference figure. JSON out.
 *
 *   BABELQUEUE_PULSAR_URL=http://127.0.0.1:8080 \
 *     node --conditions=source --import tsx bench/pulsar/index.ts [messages] [window]
 *
 * - publish: one message per frame, each awaited on its send receipt, at most
 *   `window` in flight. Raw: a producer WebSocket sending the envelope with the
 *   projection's properties; App: app.publish (builds and encodes the envelope too).
 * - consume: a Shared subscription in pull mode, `window` permits, one ack per
 *   message. Raw: parse the JSON payload and ack; App: app.consume with
 *   concurrency `window` and a no-op handler (gate, decode, validate, route, settle).
 * - python: the Python SDK (babelqueue[pulsar]) publishing with app.publish
 *   (synchronous sends) and consuming with app.consume, on a tenth of the
 *   messages, when the interop venv (scripts/peers) is there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createApp, EnvelopeCodec, projectPulsar, silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';

const WEB = process.env.BABELQUEUE_PULSAR_URL ?? 'http://127.0.0.1:8080';
const N = Number(process.argv[2] ?? 10_000);
const WINDOW = Number(process.argv[3] ?? 100);
const PY_N = Math.max(200, Math.floor(N / 10));
const URN = 'urn:babel:orders:created';
const DATA = { order_id: 1042, sku: 'ABC-123', qty: 2, note: 'café ☕' };
const root = join(import.meta.dirname, '..', '..');

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

const topics: string[] = [];
const fresh = async (label: string) => {
  const queue = `bq-bench-${label}-${process.pid}-${Date.now().toString(36)}`;
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

async function rawPublish(queue: string, count: number): Promise<void> {
  const ws = await open(`producer/persistent/public/default/${queue}`);
  let sent = 0;
  let confirmed = 0;
  await new Promise<void>((resolve, reject) => {
    const send = () => {
      const env = EnvelopeCodec.make(URN, { ...DATA, i: sent } as never, { queue });
      const properties = projectPulsar(env);
      ws.send(JSON.stringify({ payload: Buffer.from(EnvelopeCodec.encode(env)).toString('base64'), properties, context: String(sent++) }));
    };
    ws.on('message', (data) => {
      if (JSON.parse(data.toString()).result !== 'ok') reject(new Error('publish refused'));
      if (++confirmed === count) resolve();
      else if (sent < count) send();
    });
    while (sent < Math.min(WINDOW, count)) send();
  });
  ws.close();
}

async function rawConsume(queue: string, count: number): Promise<void> {
  const ws = await open(`consumer/persistent/public/default/${queue}/babelqueue?subscriptionType=Shared&pullMode=true&receiverQueueSize=${WINDOW}`);
  let seen = 0;
  await new Promise<void>((resolve) => {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      JSON.parse(Buffer.from(frame.payload, 'base64').toString('utf8'));
      ws.send(JSON.stringify({ messageId: frame.messageId }));
      ws.send(JSON.stringify({ type: 'permit', permitMessages: 1 }));
      if (++seen === count) resolve();
    });
    ws.send(JSON.stringify({ type: 'permit', permitMessages: WINDOW }));
  });
  await new Promise<void>((resolve) => {
    ws.once('close', () => resolve());
    ws.close();
  });
}

async function windowed(count: number, task: () => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(WINDOW, count) }, async () => {
    while (next++ < count) await task();
  }));
}

function pythonReference(): Record<string, unknown> {
  const python = join(process.env.BABELQUEUE_VENV ?? join(root, '.venv'), 'bin', 'python');
  if (!existsSync(python)) return { skipped: `${python} does not exist; create it with scripts/peers` };
  const queue = `bq-bench-python-${process.pid}-${Date.now().toString(36)}`;
  topics.push(queue);
  const out = execFileSync(python, [join(import.meta.dirname, 'python_reference.py'), `pulsar://${new URL(WEB).hostname}:6650`, queue, String(PY_N)], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 300_000,
  });
  return JSON.parse(out) as Record<string, unknown>;
}

// Raw WebSocket calls
const rawQueue = await fresh('raw');
const rawPublishSample = await timed(N, () => rawPublish(rawQueue, N));
const rawConsumeSample = await timed(N, () => rawConsume(rawQueue, N));

// The App, on the same broker
const appQueue = await fresh('app');
const transport = new PulsarTransport({ url: WEB, logger: silentLogger });
const app = createApp({ transport, queue: appQueue, logger: silentLogger });
app.handle(URN, () => undefined);
await app.publish(URN, DATA); // opens the producer, as the raw side's open is not timed either
const appPublishSample = await timed(N, () => windowed(N, () => app.publish(URN, DATA)));
const appConsumeSample = await timed(N + 1, () => app.consume({ maxMessages: N + 1, concurrency: WINDOW, idleMs: 10_000 }));
await app.close();

const python = pythonReference();

for (const queue of topics) {
  await fetch(`${WEB}/admin/v2/persistent/public/default/${queue}?force=true`, { method: 'DELETE' }).catch(() => undefined);
}

const pair = (raw: Sample, ours: Sample) => ({
  rawMsgsPerSec: raw.msgsPerSec,
  appMsgsPerSec: ours.msgsPerSec,
  appToRawRatio: Number((ours.msgsPerSec / raw.msgsPerSec).toFixed(3)),
  rawCpuUsPerMsg: raw.cpuUsPerMsg,
  appCpuUsPerMsg: ours.cpuUsPerMsg,
});
console.log(JSON.stringify({
  bench: 'pulsar',
  messages: N,
  window: WINDOW,
  publishConfirmed: pair(rawPublishSample, appPublishSample),
  consumePullMode: pair(rawConsumeSample, appConsumeSample),
  pythonSdkNativeClient: python,
  node: process.version,
}, null, 2));
