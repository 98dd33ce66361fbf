// A connection cut while a worker consumes: the stand-in (test/support/asb-standin),
// started in this process on a free port, destroys every client socket at once
// (`dropConnections()`), so the shared stand-in of `scripts/brokers up asb` is untouched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServiceBusClient } from '@azure/service-bus';
import { createApp } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { startStandIn, type StandIn } from '../../../test/support/asb-standin/server.js';
import { captureLogger, Raw, envelope, uniqueQueue } from './support/lab.js';
import { until, within } from '../../../test/support/until.js';

const URN = 'urn:babel:orders:created';
/** A word only the bodies carry: no log line may contain it. */
const SECRET = 'body-secret-3f9c';

describe('the Service Bus binding across a connection cut', () => {
  let standIn: StandIn;
  let url: string;
  before(async () => {
    standIn = await startStandIn({ port: 0, log: () => undefined });
    url = `Endpoint=sb://127.0.0.1:${standIn.port};SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true`;
  });
  after(async () => {
    standIn.dropConnections();
    await standIn.close();
  });

  it('keeps run() consuming after every socket is cut mid-delivery: the in-flight message and a later one are both handled, nothing is lost', async () => {
    const queue = uniqueQueue('bq-asb-cut');
    // Short locks: a message whose lock died with the connection comes back quickly.
    standIn.namespace.queue(queue).config.lockDurationMs = 2_000;
    const logger = captureLogger();
    // Short operation timeouts: a settlement on the cut link fails in seconds instead of the
    // SDK's default 3 x 30 s (the runtime leaves that message for redelivery).
    const client = new ServiceBusClient(url, { retryOptions: { timeoutInMs: 2_000, maxRetries: 1, retryDelayInMs: 100 } });
    const transport = new AzureServiceBusTransport({ client, logger, lockDurationMs: 2_000, maxLockRenewalMs: 3_000 });
    const app = createApp({ transport, queue, logger });
    const handled: number[] = [];
    let cutDone = false;
    let releaseFirst: () => void = () => undefined;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    app.handle(URN, async (data: { order: number }) => {
      const first = handled.length === 0;
      handled.push(data.order);
      if (first) await firstHeld;
    });
    const stop = new AbortController();
    let ended: { error?: unknown } | undefined;
    const running = app.run({ signal: stop.signal, concurrency: 2 }).then(() => {
      ended = {};
    }, (error: unknown) => {
      ended = { error };
    });
    const raw = new Raw(url);
    try {
      await raw.send(queue, { body: envelope(URN, { order: 1, note: SECRET }, queue).body, contentType: 'application/json' });
      await until(() => handled.length === 1, 20_000, 'the first message in the handler');
      assert.ok(standIn.dropConnections() > 0, 'the cut closed the client sockets');
      cutDone = true;
      releaseFirst();
      const later = new Raw(url);
      try {
        await later.send(queue, { body: envelope(URN, { order: 2, note: SECRET }, queue).body, contentType: 'application/json' });
      } finally {
        await later.close();
      }
      await until(() => ended !== undefined || (handled.includes(2) && handled.filter((order) => order === 1).length >= 1 && isEmpty()), 30_000, 'both messages handled and settled');
      assert.equal(ended, undefined, `run() is still consuming after the cut (it ended with ${String(ended?.error)})`);
      assert.ok(cutDone, 'the cut happened while the first message was in the handler');
      assert.ok(logger.lines.some((line) => line.level === 'warn'), `the cut is reported at WARN:\n${logger.text()}`);
      assert.ok(!logger.text().includes(SECRET), 'no log line prints a body');
    } finally {
      releaseFirst();
      stop.abort();
      await within(running, 30_000, 'run() to stop after abort');
      await app.close();
      await raw.close();
      await client.close();
    }

    function isEmpty(): boolean {
      const counts = standIn.namespace.queue(queue).counts(Date.now());
      return counts.active === 0 && counts.locked === 0;
    }
  });
});
