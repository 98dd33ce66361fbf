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
 *   messages, when the interop venv (scripts/peers) is there (`reference`).
 *
 * Three rounds, the side that goes first alternating, medians (bench/support).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { projectPulsar, silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { timed, type Sample } from '../support/measure.js';
import { printReport } from '../support/report.js';
import { alternate, Rounds } from '../support/rounds.js';
import { benchApp, benchQueue, DATA, encoded, URN, windowed } from '../support/workload.js';

const WEB = process.env.BABELQUEUE_PULSAR_URL ?? 'http://127.0.0.1:8080';
const N = Number(process.argv[2] ?? 10_000);
const WINDOW = Number(process.argv[3] ?? 100);
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

const rounds = new Rounds();

async function rawRound(): Promise<void> {
  const queue = await fresh('pulsar-raw');
  rounds.add('publishConfirmed', 'raw', await rawPublish(queue));
  await rounds.time('consumePullMode', 'raw', N, () => rawConsume(queue));
}

async function appRound(): Promise<void> {
  const app = benchApp(new PulsarTransport({ url: WEB, logger: silentLogger }), await fresh('pulsar-app'));
  await app.publish(URN, DATA); // opens the producer, as the raw side's open is not timed either
  await rounds.time('publishConfirmed', 'app', N, () => windowed(N, WINDOW, (i) => app.publish(URN, { ...DATA, i })));
  await rounds.time('consumePullMode', 'app', N + 1, () => app.consume({ maxMessages: N + 1, concurrency: WINDOW, idleMs: 10_000 }));
  await app.close();
}

await alternate(ROUNDS, [rawRound, appRound]);
const python = pythonReference();

for (const queue of topics) {
  await fetch(`${WEB}/admin/v2/persistent/public/default/${queue}?force=true`, { method: 'DELETE' }).catch(() => undefined);
}

printReport({
  bench: 'pulsar',
  params: { messages: N, window: WINDOW, rounds: ROUNDS },
  measurements: rounds.measurements(),
  reference: { pythonSdkNativeClient: { ...python, note: `the official Python SDK's native client on ${PY_N} messages, not App beside raw` } },
});
