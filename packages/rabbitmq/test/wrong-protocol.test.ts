// A RabbitMQ URL pointed at an AMQP 1.0 server (the lab's ActiveMQ Artemis):
// amqplib reads Artemis's protocol header as an impossible frame size. The
// binding says what happened, at once and without retrying.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConnectError, createApp } from '@babelqueue/core';
import { RabbitMqTransport, RabbitMqUnavailableError } from '@babelqueue/rabbitmq';
import { broker } from '../../../test/support/brokers.js';
import { captureLogger } from '../../../test/support/capture-logger.js';

const artemis = broker('artemis');

describe('RabbitMQ transport against an AMQP 1.0 server', { skip: artemis.skip }, () => {
  // The lab's Artemis URL in the AMQP spelling (what `transportFromUrl` would route to RabbitMQ).
  const url = artemis.url!.replace(/^artemis:/, 'amqp:');

  it('connect fails at once naming AMQP 1.0 and artemis://, with no retry', async () => {
    const logger = captureLogger();
    const transport = new RabbitMqTransport({ url, logger });
    try {
      await assert.rejects(transport.connect({ timeoutMs: 60_000, signal: new AbortController().signal }), (error: unknown) => {
        assert.match(String((error as Error).message), /this server speaks AMQP 1\.0.*for ActiveMQ Artemis use artemis:\/\//);
        assert.doesNotMatch(String((error as Error).message), /admin:admin/);
        return true;
      });
      assert.equal(logger.lines.filter((l) => /retrying/.test(l.message)).length, 0, logger.text());
      // Final: a second call does not try again either.
      await assert.rejects(transport.connect({ timeoutMs: 60_000, signal: new AbortController().signal }), /speaks AMQP 1\.0/);
    } finally {
      await transport.close();
    }
  });

  it('run() rejects with a ConnectError that says so, well before connectTimeoutMs', async () => {
    const logger = captureLogger();
    const app = createApp({ transport: new RabbitMqTransport({ url, logger }), queue: 'bq-rmq-wrong-protocol', logger, connectTimeoutMs: 60_000 });
    app.handle('urn:babel:orders:created', () => undefined);
    const began = Date.now();
    await assert.rejects(app.run(), (error: unknown) => {
      assert.ok(error instanceof ConnectError || error instanceof RabbitMqUnavailableError, String(error));
      assert.match((error as Error).message, /speaks AMQP 1\.0/);
      return true;
    });
    assert.ok(Date.now() - began < 30_000, 'not the 60 s connect timeout');
    assert.equal(logger.lines.filter((l) => /retrying/.test(l.message)).length, 0, logger.text());
  });
});
