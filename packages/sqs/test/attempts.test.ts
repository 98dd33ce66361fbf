import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createApp, type AppOptions } from '@babelqueue/core';
import type { SqsTransportOptions } from '@babelqueue/sqs';
import { CREDENTIALS, Raw, REGION, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 15_000;

/**
 * SQS counts every receive in ApproximateReceiveCount and the runtime reads
 * max(body, count − 1) as attempts: a message received and given back without
 * a handler run must not have spent one.
 */
describe('SQS attempts: only handler runs count', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  function app(queue: string, options: Partial<AppOptions> = {}, transportOptions: SqsTransportOptions = {}) {
    const { transport: t, logger } = transport(transportOptions);
    return { app: createApp({ transport: t, queue, logger, ...options }), transport: t, logger };
  }

  it('FIFO: each message of a group gets exactly maxAttempts runs, whatever its group-mates do', async () => {
    const q = await raw.fresh('fifo-mates', { fifo: true });
    const { app: a } = app(q.name, { maxAttempts: 3 });
    for (const n of [1, 2, 3]) await a.publish(URN, { n }, { key: 'g' });
    const runs: [number, number][] = [];
    a.handle<{ n: number }>(URN, (data, message) => {
      runs.push([data.n, message.attempts]);
      if (data.n !== 3) throw new Error(`n=${data.n} always fails`);
    });
    // concurrency 10: a receive could take the whole group at once.
    await a.consume({ concurrency: 10, maxMessages: 7, idleMs: IDLE_MS });
    await a.close();
    assert.deepEqual(runs, [[1, 1], [1, 2], [1, 3], [2, 1], [2, 2], [2, 3], [3, 1]], 'three runs each for n=1 and n=2 (then dropped), n=3 at attempt 1');
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });

  it('FIFO: a graceful stop in the middle of a group charges none of the messages it did not begin', async () => {
    const q = await raw.fresh('fifo-stop', { fifo: true });
    const runs: [number, number][] = [];
    const stop = new AbortController();
    const first = app(q.name);
    for (const n of [1, 2, 3]) await first.app.publish(URN, { n }, { key: 'g' });
    first.app.handle<{ n: number }>(URN, (data, message) => {
      runs.push([data.n, message.attempts]);
      stop.abort(); // the worker is told to stop while it holds the group
    });
    await first.app.run({ signal: stop.signal, concurrency: 10 });
    const second = app(q.name);
    second.app.handle<{ n: number }>(URN, (data, message) => void runs.push([data.n, message.attempts]));
    await second.app.consume({ concurrency: 10, maxMessages: 3 - runs.length, idleMs: IDLE_MS });
    await second.app.close();
    assert.deepEqual(runs, [[1, 1], [2, 1], [3, 1]], 'every message handled once, at attempt 1, in order');
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });

  it('stopWaitsForPoll: a graceful stop hands over what the receive in flight brought: giving it back would charge an attempt', async () => {
    const q = await raw.fresh('stop-poll');
    const client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
    let polling!: () => void;
    const polled = new Promise<void>((resolve) => (polling = resolve));
    client.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'ReceiveMessageCommand') polling();
      return next(args);
    }, { step: 'initialize' });
    const runs: [number, number][] = [];
    const stop = new AbortController();
    const first = app(q.name, {}, { client, waitTimeSeconds: 5, stopWaitsForPoll: true });
    first.app.handle<{ n: number }>(URN, (data, message) => void runs.push([data.n, message.attempts]));
    const running = first.app.run({ signal: stop.signal, concurrency: 10 });
    await polled; // the loop is past its stop check: this receive goes out whatever happens next
    stop.abort();
    const publisher = app(q.name);
    for (const n of [1, 2, 3]) await publisher.app.publish(URN, { n });
    await publisher.app.close();
    await running;
    client.destroy();
    const second = app(q.name);
    second.app.handle<{ n: number }>(URN, (data, message) => void runs.push([data.n, message.attempts]));
    await second.app.consume({ concurrency: 10, maxMessages: 3 - runs.length, idleMs: IDLE_MS });
    await second.app.close();
    assert.deepEqual(runs.sort(), [[1, 1], [2, 1], [3, 1]], 'every message handled once, at attempt 1');
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
  });
});
