import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createApp } from '@babelqueue/core';
import { parseSqsUrl } from '@babelqueue/sqs';
import { within } from '../../../test/support/until.js';
import { CREDENTIALS, Raw, REGION, sqs, transport } from './support/sqs.js';

const URN = 'urn:babel:orders:created';
/** Bounds a consume that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 20_000;

/** A client that resolves `polling` once a ReceiveMessage goes out: the worker's long poll is in flight. */
function watchedClient() {
  const client = new SQSClient({ endpoint: sqs.url!, region: REGION, credentials: CREDENTIALS });
  let polling!: () => void;
  const polled = new Promise<void>((resolve) => (polling = resolve));
  client.middlewareStack.add((next, context) => async (args) => {
    if (context.commandName === 'ReceiveMessageCommand') polling();
    return next(args);
  }, { step: 'initialize' });
  return { client, polled };
}

/** Ctrl-C on an idle SQS worker: the long poll must not hold the stop. */
describe('SQS stop of an idle worker', { skip: sqs.skip }, () => {
  let raw: Raw;
  before(() => {
    raw = new Raw();
  });
  after(() => raw.close());

  it('by default a graceful stop waits for the long poll in flight and says so in a log line', async () => {
    const q = await raw.fresh('stop-waits');
    const { client, polled } = watchedClient();
    const { transport: t, logger } = transport({ client, waitTimeSeconds: 3 });
    const worker = createApp({ transport: t, queue: q.name, logger });
    worker.handle(URN, () => undefined);
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    await polled;
    stop.abort();
    await within(running, 20_000, 'run() to resolve after the poll');
    client.destroy();
    assert.match(logger.text(), /stopping: waiting up to 3 s for the SQS long poll in flight/);
    assert.match(logger.text(), /worker stopped/);
  });

  it('stopWaitsForPoll: false cancels a 20 s long poll: run() resolves within seconds; a message sent just after is not lost', async () => {
    const q = await raw.fresh('stop-idle');
    const { client, polled } = watchedClient();
    const { transport: t, logger } = transport({ client, waitTimeSeconds: 20, visibilityTimeoutSeconds: 2, stopWaitsForPoll: false });
    const worker = createApp({ transport: t, queue: q.name, logger });
    worker.handle(URN, () => assert.fail('the stopped worker handles nothing'));
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    await polled;
    const stoppedAt = Date.now();
    stop.abort();
    // Without the cancel, run() waits out the 20 s poll.
    await within(running, 5_000, 'run() to resolve after the stop');
    const tookMs = Date.now() - stoppedAt;
    client.destroy();
    assert.match(logger.text(), /worker stopped/);

    // SQS may still hold the cancelled receive and hand it this message: then it
    // is back after the 2 s visibility timeout, one receive counted (README).
    const { transport: pt } = transport();
    const next = createApp({ transport: pt, queue: q.name, logger: transport().logger });
    const runs: number[] = [];
    next.handle(URN, (_data, message) => void runs.push(message.attempts));
    await next.publish(URN, { order_id: 1 });
    assert.equal(await next.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1, 'the message is delivered');
    await next.close();
    assert.equal(runs.length, 1);
    assert.ok(runs[0] === 1 || runs[0] === 2, `attempt 1, or 2 when the cancelled receive took it (got ${runs[0]})`);
    assert.deepEqual(await raw.counts(q.url), { visible: 0, inFlight: 0, delayed: 0 });
    assert.ok(tookMs < 5_000, `stopped in ${tookMs} ms`);
  });

  it('URL stop_waits_for_poll=0 clears stopWaitsForPoll (the graceful stop then cancels the poll)', () => {
    assert.equal(parseSqsUrl('sqs://us-east-1?stop_waits_for_poll=0').stopWaitsForPoll, false);
    assert.equal(parseSqsUrl('sqs://us-east-1?stop_waits_for_poll=1').stopWaitsForPoll, true);
    assert.equal(parseSqsUrl('sqs://us-east-1').stopWaitsForPoll, undefined);
  });
});
