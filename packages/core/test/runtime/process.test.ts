import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ConfigurationError,
  createApp,
  EnvelopeCodec,
  InMemoryTransport,
  type Decision,
  type JsonObject,
} from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';
import { captureLogger } from '../../../../test/support/capture-logger.js';

const URN = 'urn:babel:orders:created';

/** A delivery handed over from outside the App (as a serverless trigger would), recording its settlement. */
function delivery(body: Buffer, receiveCount = 1): Delivery & { decisions: Decision[] } {
  const decisions: Decision[] = [];
  return {
    body,
    queue: 'orders',
    headers: {},
    decisions,
    // The memory transport's formula: max(body.attempts, native), native 0-based.
    nativeAttempts: receiveCount - 1,
    settle: async (decision) => void decisions.push(decision),
  };
}

function envelope(data: JsonObject): Buffer {
  return Buffer.from(EnvelopeCodec.encode(EnvelopeCodec.make(URN, data, { queue: 'orders' })), 'utf8');
}

function setup(options: { handlerTimeoutMs?: number } = {}) {
  const logger = captureLogger();
  const transport = new InMemoryTransport();
  const app = createApp({ transport, queue: 'orders', logger, deadLetter: true, ...options });
  return { app, transport, logger };
}

describe('App.process: one delivery received outside the App', () => {
  test('runs the handler by URN and settles with the policy (ack; retry; dead-letter on the last attempt)', async () => {
    const { app, transport } = setup();
    assert.equal(app.transport, transport);
    const seen: number[] = [];
    app.handle(URN, (data: { n: number }, message) => {
      seen.push(message.attempts);
      if (data.n === 2) throw new Error('refused');
    });
    const ok = delivery(envelope({ n: 1 }));
    await app.process(ok);
    assert.deepEqual(ok.decisions.map((d) => d.kind), ['ack']);

    const failing = delivery(envelope({ n: 2 }));
    await app.process(failing);
    assert.deepEqual(failing.decisions.map((d) => d.kind), ['retry']);

    const last = delivery(envelope({ n: 2 }), 3);
    await app.process(last);
    assert.deepEqual(last.decisions.map((d) => d.kind), ['dead-letter']);
    assert.deepEqual(seen, [1, 1, 3]);
  });

  test('handlerTimeoutMs bounds this delivery only: the handler is failed (retry path) and its signal aborted', async () => {
    const { app } = setup({ handlerTimeoutMs: 60_000 });
    let aborted: AbortSignal | undefined;
    app.handle(URN, (_data, message) => {
      aborted = message.signal;
      return new Promise(() => {}); // never settles
    });
    const d = delivery(envelope({ n: 1 }));
    await app.process(d, { handlerTimeoutMs: 20 });
    assert.deepEqual(d.decisions.map((x) => x.kind), ['retry']);
    assert.equal(aborted?.aborted, true);
  });

  test('the App\'s own handlerTimeoutMs still applies when it is the lower one', async () => {
    const { app } = setup({ handlerTimeoutMs: 20 });
    app.handle(URN, () => new Promise(() => {}));
    const d = delivery(envelope({ n: 1 }));
    await app.process(d, { handlerTimeoutMs: 600_000 });
    assert.deepEqual(d.decisions.map((x) => x.kind), ['retry']);
  });

  test('bad options are refused', () => {
    const { app } = setup();
    assert.throws(() => app.process(delivery(envelope({})), { handlerTimeoutMs: 0 }), ConfigurationError);
    assert.throws(() => app.process(delivery(envelope({})), { timeout: 5 } as never), ConfigurationError);
  });
});
