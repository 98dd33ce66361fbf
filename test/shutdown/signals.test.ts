// A worker with a handler that never returns, on the real RabbitMQ: SIGTERM
// shuts it down within the shutdown deadline, the message is left unsettled
// (never acknowledged) and redelivered; a second Ctrl-C exits at once; Ctrl-C
// while the broker cannot be reached at start-up ends the wait at once; a
// handler sleeping on a timer (past the deadline or its handler timeout) does
// not keep the process alive after the worker stopped.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createApp, silentLogger } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { broker, uniqueQueue } from '../support/brokers.js';
import { CuttableProxy } from '../support/cuttable-proxy.js';

const lab = broker('rabbitmq');
const URN = 'urn:babel:orders:created';
const root = join(import.meta.dirname, '..', '..');

interface Worker {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function worker(url: string, queue: string, connectTimeoutMs?: number, fixture = 'hung-worker.ts', extra: string[] = []): Worker {
  const args = ['--conditions=source', '--import', 'tsx', join(import.meta.dirname, 'fixtures', fixture), url, queue];
  if (connectTimeoutMs !== undefined) args.push(String(connectTimeoutMs));
  args.push(...extra);
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BABELQUEUE_LOG_LEVEL: 'info' } });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, out: () => out, err: () => err, exited };
}

/** Polls until `check` holds; fails (never hangs) after the deadline. */
async function until(check: () => boolean, what: string, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits for the exit, or kills the child and fails after the deadline. */
async function exitOf(w: Worker, deadlineMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      w.child.kill('SIGKILL');
      reject(new Error(`the worker did not exit within ${deadlineMs} ms; stderr:\n${w.err()}`));
    }, deadlineMs);
  });
  try {
    return await Promise.race([w.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('worker shutdown on signals (RabbitMQ)', { skip: lab.skip }, () => {
  const children: Worker[] = [];
  after(() => {
    for (const w of children) if (w.child.exitCode === null) w.child.kill('SIGKILL');
  });

  async function publishOne(queue: string): Promise<string> {
    const producer = createApp({ transport: new RabbitMqTransport({ url: lab.url!, logger: silentLogger }), queue, logger: silentLogger });
    try {
      return await producer.publish(URN, { order_id: 7 });
    } finally {
      await producer.close();
    }
  }

  async function redelivered(queue: string, id: string): Promise<void> {
    const consumer = createApp({ transport: new RabbitMqTransport({ url: lab.url!, logger: silentLogger }), queue, logger: silentLogger });
    const seen: string[] = [];
    consumer.handle(URN, (_data, message) => void seen.push(message.id));
    try {
      await consumer.consume({ maxMessages: 1, idleMs: 20_000 });
    } finally {
      await consumer.close();
    }
    assert.deepEqual(seen, [id], 'the message was left for redelivery, not acknowledged');
  }

  test('SIGTERM with a hung handler: interrupted at the deadline, exits by itself, message redelivered', async () => {
    const queue = uniqueQueue('shutdown-term');
    const id = await publishOne(queue);
    const w = worker(lab.url!, queue);
    children.push(w);
    await until(() => w.out().includes(`started ${id}`), 'the handler to start');
    w.child.kill('SIGTERM');
    // Deadline 1 s, then the transport closes (bounded at 5 s); the slack is for a loaded machine.
    const { code } = await exitOf(w, 30_000);
    // The signal's exit code: a message was left unsettled.
    assert.equal(code, 143, w.err());
    assert.match(w.out(), /run returned/);
    assert.match(w.err(), /SIGTERM: shutting down gracefully \(send it again to exit at once\)/);
    assert.match(w.err(), /shutdown deadline passed: 1 message\(s\) left unsettled for redelivery \(never acknowledged\)/);
    assert.match(w.err(), /worker stopped/);
    await redelivered(queue, id);
  });

  test('Ctrl-C with a handler sleeping on a timer: the library exits the process (130) after the deadline, message redelivered', async () => {
    const queue = uniqueQueue('shutdown-sleeping');
    const id = await publishOne(queue);
    const w = worker(lab.url!, queue, undefined, 'sleeping-worker.ts');
    children.push(w);
    await until(() => w.out().includes(`started ${id}`), 'the handler to start');
    w.child.kill('SIGINT');
    // Deadline 1 s, interrupt grace 2 s, bounded close, exit grace 2 s; the slack is for a loaded machine.
    const { code, signal } = await exitOf(w, 45_000);
    assert.equal(signal, null, 'exited by itself, not killed');
    assert.equal(code, 130, w.err());
    assert.match(w.out(), /run returned/, 'run() resolved first: the code after it had its chance');
    assert.match(w.err(), /shutdown deadline passed: 1 message\(s\) left unsettled/);
    assert.match(w.err(), /worker stopped/);
    assert.match(w.err(), /exiting: 1 handler\(s\) still running after the worker stopped on SIGINT/);
    await redelivered(queue, id);
  });

  test('SIGTERM after a handler timed out but sleeps on: the process still ends (143)', async () => {
    const queue = uniqueQueue('shutdown-timed-out');
    const id = await publishOne(queue);
    const w = worker(lab.url!, queue, undefined, 'sleeping-worker.ts', ['300']);
    children.push(w);
    await until(() => w.out().includes(`started ${id}`), 'the handler to start');
    await until(() => /dropped: the message is gone/.test(w.err()), 'the handler timeout to fail the message');
    w.child.kill('SIGTERM');
    const { code, signal } = await exitOf(w, 45_000);
    assert.equal(signal, null, 'exited by itself, not killed');
    assert.equal(code, 143, w.err());
    assert.match(w.out(), /run returned/);
    assert.match(w.err(), /exiting: 1 handler\(s\) still running after the worker stopped on SIGTERM/);
  });

  test('Ctrl-C twice exits at once (130), leaving the message for redelivery', async () => {
    const queue = uniqueQueue('shutdown-twice');
    const id = await publishOne(queue);
    const w = worker(lab.url!, queue);
    children.push(w);
    await until(() => w.out().includes(`started ${id}`), 'the handler to start');
    w.child.kill('SIGINT');
    await until(() => w.err().includes('SIGINT: shutting down gracefully'), 'the first SIGINT to be seen');
    w.child.kill('SIGINT');
    const { code } = await exitOf(w, 30_000);
    assert.equal(code, 130);
    assert.match(w.err(), /SIGINT again: exiting now; 1 message\(s\) left unsettled for redelivery/);
    assert.doesNotMatch(w.out(), /run returned/);
    await redelivered(queue, id);
  });

  test('Ctrl-C after the broker went away mid-run exits promptly, not after minutes of silent reconnects', async () => {
    const target = new URL(lab.url!);
    const proxy = new CuttableProxy({ host: target.hostname, port: Number(target.port || 5672) });
    await proxy.start();
    try {
      const w = worker(proxy.url(lab.url!), uniqueQueue('shutdown-broker-gone'));
      children.push(w);
      await until(() => /consuming shutdown-broker-gone/.test(w.err()), 'the worker to say it is consuming');
      await proxy.down();
      await until(() => /connection lost|connection error/i.test(w.err()), 'the worker to notice the broker is gone');
      w.child.kill('SIGINT');
      // Shutdown deadline 1 s plus the bounded close (5 s); the slack is for a loaded machine.
      const { code } = await exitOf(w, 30_000);
      assert.equal(code, 0, w.err());
      assert.match(w.err(), /worker stopped/);
    } finally {
      await proxy.down();
    }
  });

  test('Ctrl-C while the broker cannot be reached at start-up stops the wait at once', async () => {
    const w = worker('amqp://guest:guest@127.0.0.1:1', uniqueQueue('shutdown-unreachable'), 600_000);
    children.push(w);
    // Not 'ready' (printed before run() installs its signal handlers: a SIGINT then would
    // meet Node's default and kill the process): a failed connect attempt is logged by run().
    await until(() => /cannot connect to RabbitMQ/.test(w.err()), 'the worker to be waiting for the broker');
    w.child.kill('SIGINT');
    const { code } = await exitOf(w, 30_000);
    assert.equal(code, 0, w.err());
    assert.doesNotMatch(w.err(), /consuming /);
    assert.doesNotMatch(w.err(), /worker stopped/, 'a worker that never started does not say it stopped');
  });
});
