// The bq- application properties are AMQP-typed on the wire (seed 000, FACTS §4):
// bq-schema-version an int, bq-source-lang a string, bq-created-at a long. The
// SDKs decode every integer width to a number, so the wire is read with
// `peek-message` and decoded by the lab (stand-in only).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp, UnrecoverableError, type AppOptions } from '@babelqueue/core';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { asb, captureLogger, configureQueue, envelope, isStandIn, peekWire, Raw, uniqueQueue, type WireMessage } from './support/lab.js';

const RETRIED = 'urn:babel:orders:retried';
const FATAL = 'urn:babel:orders:fatal';
const CONTRACT_TYPES = { 'bq-schema-version': 'int', 'bq-source-lang': 'string', 'bq-created-at': 'long' };

const typesOf = (m: WireMessage | undefined) =>
  Object.fromEntries(Object.entries(m?.applicationProperties ?? {}).map(([k, v]) => [k, v.type]));

const skip = asb.skip || (isStandIn(asb.url!) ? false : 'peek-message is read over a plain AMQP link: stand-in only');

describe('Azure Service Bus: the bq- application properties on the wire', { skip }, () => {
  const url = asb.url!;
  let raw: Raw;
  before(() => {
    raw = new Raw(url);
  });
  after(async () => {
    await raw.close();
  });

  function app(queue: string, options: Partial<AppOptions> = {}) {
    const logger = captureLogger();
    const transport = new AzureServiceBusTransport({ connectionString: url, logger });
    return createApp({ transport, queue, logger, ...options });
  }

  it('a publish, a retry copy and a DLQ record carry an int schema version and a long created-at', async () => {
    const queue = uniqueQueue('bq-asb-wire');
    const dlq = `${queue}.dlq`;
    await configureQueue(url, queue);
    await configureQueue(url, dlq);
    const a = app(queue, { deadLetter: true, maxAttempts: 3, retryBackoff: { baseMs: 3_600_000 } });
    a.handle(RETRIED, () => {
      throw new Error('boom');
    });
    a.handle(FATAL, () => {
      throw new UnrecoverableError('fatal');
    });
    try {
      await a.publish(RETRIED, { n: 1 });
      const [published] = await peekWire(url, queue);
      assert.deepEqual(typesOf(published), CONTRACT_TYPES, 'publish');
      assert.equal(published!.applicationProperties['bq-schema-version']!.value, 1);

      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
      await a.publish(FATAL, { n: 2 });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
    } finally {
      await a.close();
    }
    const [copy, ...rest] = await peekWire(url, queue);
    assert.equal(rest.length, 0, 'only the scheduled retry copy is left');
    assert.equal(JSON.parse(copy!.body!.toString('utf8')).attempts, 1, 'the retry copy');
    assert.deepEqual(typesOf(copy), CONTRACT_TYPES, 'retry copy');
    const [record] = await peekWire(url, dlq);
    assert.equal(JSON.parse(record!.body!.toString('utf8')).dead_letter.reason, 'failed', 'the DLQ record');
    assert.deepEqual(typesOf(record), CONTRACT_TYPES, 'DLQ record');
  });

  it("a version-gated record keeps the delivery's properties, created-at typed long", async () => {
    const queue = uniqueQueue('bq-asb-wire-gate');
    const dlq = `${queue}.dlq`;
    await configureQueue(url, queue);
    await configureQueue(url, dlq);
    const a = app(queue, { deadLetter: true });
    const { body, projection } = envelope(RETRIED, { n: 3 }, queue);
    try {
      // A foreign producer's numbers: the JS client sends a positive number as ulong.
      await raw.send(queue, { body, applicationProperties: { 'bq-schema-version': '2', 'bq-created-at': projection.createdAt!, traceparent: 'tp' } });
      assert.equal(await a.consume({ maxMessages: 1, idleMs: 5000 }), 1);
    } finally {
      await a.close();
    }
    const [record] = await peekWire(url, dlq);
    assert.ok(record?.body?.equals(body), 'the raw body');
    assert.deepEqual(typesOf(record), { 'bq-created-at': 'long', traceparent: 'string' });
  });
});
