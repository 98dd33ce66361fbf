// Interop with the Python SDK (AsbTransport over azure-servicebus, whose AMQP
// stack is pure Python) through the Service Bus stand-in (test/support/asb-standin,
// an AMQP 1.0 server both official clients talk to; not Service Bus). Queues
// appear on first use; the DLQ is `<queue>.dlq`, an ordinary queue. The peer is
// handed the connection string the way the Python SDK reads one for a URL:
// `sb://` with AZURE_SERVICEBUS_CONNECTION_STRING set (see peer.py).
//
// Known divergence (docs/brokers.md, "Azure Service Bus"): Service Bus puts the
// AMQP header delivery-count on the wire 0-based (failed deliveries so far) and
// azure-servicebus hands it over unchanged as `delivery_count`; the Python SDK
// 1.24.0 takes that value for the spec's 1-based DeliveryCount and subtracts 1,
// so after one abandon it reads attempts 0 where the spec (and we) read 1.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { createApp, silentLogger, type App, type Message } from '@babelqueue/core';
import { peekWire, Raw, type WireMessage } from '../../packages/azure-service-bus/test/support/lab.js';
import { broker, uniqueQueue } from '../support/brokers.js';
import { bytes, pythonPeer } from './support/python-peer.js';
import { describeInterop, type PeerReceived } from './support/scenarios.js';

const asb = broker('asb');
const transport = (url: string) => new AzureServiceBusTransport({ connectionString: url, logger: silentLogger });

async function purge(url: string, queues: string[]): Promise<void> {
  const t = transport(url);
  try {
    for (const q of queues) await t.purge(q);
  } finally {
    await t.close();
  }
}

/**
 * The native fields the Python SDK reports of a delivery we produced from `body`. A retry
 * copy's MessageId is `<meta.id>:retry:<sequence number>` (duplicate detection would drop a
 * second send under meta.id; packages/azure-service-bus/README.md).
 */
function assertNativeToPython(received: PeerReceived, options: { retryCopy?: boolean } = {}): void {
  const native = received.native;
  assert.ok(native, 'peer.py reports the native fields of a Service Bus delivery');
  const env = JSON.parse(bytes(received.body).toString('utf8'));
  assert.equal(native.subject, env.job);
  assert.equal(native.correlation_id, env.trace_id);
  if (options.retryCopy === true) assert.match(String(native.message_id), new RegExp(`^${env.meta.id}:retry:\\d+$`));
  else assert.equal(native.message_id, env.meta.id);
  assert.equal(native.content_type, 'application/json');
  assert.deepEqual(native.application_properties, {
    'bq-schema-version': { value: 1, type: 'int' },
    'bq-source-lang': { value: 'node', type: 'str' },
    'bq-created-at': { value: env.meta.created_at, type: 'int' },
  });
}

describeInterop({
  name: 'asb',
  broker: asb,
  transport,
  cleanup: purge,
  native: {
    // Our Message surfaces the application properties; subject, correlation id,
    // message id and the AMQP types are read back below with the raw client and peek.
    fromPython(m) {
      assert.equal(m.headers['bq-schema-version'], 1);
      assert.equal(m.headers['bq-source-lang'], 'python');
      assert.equal(m.headers['bq-created-at'], m.envelope.meta.created_at);
    },
    toPython(_headers, received) {
      assertNativeToPython(received);
      assert.equal(received.native!.delivery_count, 0, 'the first delivery: no failed delivery so far');
    },
  },
  pythonRetryAttempts: {
    attempts: 0,
    why: 'an immediate retry abandons (wire delivery-count 1); the Python SDK 1.24.0 reads delivery_count 1 as DeliveryCount 1 and keeps attempts 0 (docs/brokers.md)',
  },
});

const URN = 'urn:babel:interop:order-placed';
const DATA = { order_id: 7, note: 'wire' };

const peer = pythonPeer('asb wire (Python SDK)');

describe('interop over asb: the wire between the Python SDK and TypeScript', { skip: asb.skip || peer.skip }, () => {
  const url = asb.url!;
  const queues: string[] = [];
  const apps: App[] = [];
  after(async () => {
    for (const app of apps) await app.close();
    await purge(url, queues);
  });
  const queue = (): string => {
    const q = uniqueQueue('interop-asb-wire');
    queues.push(q);
    return q;
  };
  const tsApp = (q: string, options: { fail?: number; backoffMs?: number } = {}) => {
    const app = createApp({
      transport: transport(url),
      queue: q,
      logger: silentLogger,
      ...(options.backoffMs !== undefined ? { retryBackoff: { baseMs: options.backoffMs } } : {}),
    });
    apps.push(app);
    const handled: Message[] = [];
    let failures = options.fail ?? 0;
    app.handle(URN, (_data, message) => {
      handled.push(message);
      if (failures > 0) {
        failures--;
        throw new Error('typescript handler failure on purpose');
      }
    });
    return { app, handled };
  };
  const pyPublish = (q: string, traceId: string) =>
    peer.run(['publish', '--url', url, '--queue', q, '--urn', URN, '--data', JSON.stringify(DATA), '--trace-id', traceId]);
  // --max 1 returns with the first message: the timeout only bounds a failure. A Python start and
  // the stand-in's link set-up on two busy cores took most of 5 s, and a copy scheduled just before missed it.
  const pyConsume = (q: string, ...flags: string[]) =>
    peer.run(['consume', '--url', url, '--queue', q, '--urn', URN, '--max', '1', '--timeout', '30', ...flags]);
  const attemptsOf = (m: WireMessage) => JSON.parse(m.body!.toString('utf8')).attempts;
  const CONTRACT_TYPES = { 'bq-schema-version': 'int', 'bq-source-lang': 'string', 'bq-created-at': 'long' };
  const typesOf = (m: WireMessage) => Object.fromEntries(Object.entries(m.applicationProperties).map(([k, v]) => [k, v.type]));

  it('both SDKs put the same native fields on the wire, the bq- properties typed int, string and long', async () => {
    const q = queue();
    const sent = await pyPublish(q, 'trace-wire-py');
    const ts = tsApp(q);
    const id = await ts.app.publish(URN, DATA, { traceId: 'trace-wire-ts' });

    const [fromPython, fromUs] = await peekWire(url, q);
    assert.ok(fromPython && fromUs, 'both messages are on the queue');
    assert.deepEqual(typesOf(fromPython), CONTRACT_TYPES);
    assert.deepEqual(typesOf(fromUs), CONTRACT_TYPES);
    assert.equal(fromPython.applicationProperties['bq-source-lang']!.value, 'python');
    assert.equal(fromUs.applicationProperties['bq-source-lang']!.value, 'node');
    assert.ok(fromPython.body!.equals(bytes(sent.body)), 'the Python body is on the wire as the SDK sent it');

    const raw = new Raw(url);
    try {
      const [a, b] = await raw.drain(q, { max: 2 });
      for (const [m, traceId, messageId, lang] of [[a, 'trace-wire-py', sent.id, 'python'], [b, 'trace-wire-ts', id, 'node']] as const) {
        assert.ok(m, `the ${lang} message was received`);
        assert.equal(m.subject, URN);
        assert.equal(m.correlationId, traceId);
        assert.equal(m.messageId, messageId);
        assert.equal(m.contentType, 'application/json');
        const env = JSON.parse((m.body as Buffer).toString('utf8'));
        assert.deepEqual(m.applicationProperties, { 'bq-schema-version': 1, 'bq-source-lang': lang, 'bq-created-at': env.meta.created_at });
      }
    } finally {
      await raw.close();
    }
  });

  it('after two abandons (wire delivery-count 2) the Python SDK reads attempts 1; we read attempts 1 at delivery-count 1', async () => {
    const q = queue();
    const ts = tsApp(q, { fail: 2 });
    await ts.app.publish(URN, DATA);
    assert.equal(await ts.app.consume({ maxMessages: 2, idleMs: 5000 }), 2);
    assert.deepEqual(ts.handled.map((m) => m.attempts), [1, 2], 'our reading: delivery-count 0 then 1 are attempts 0 then 1 (counted 1 and 2)');

    const [waiting] = await peekWire(url, q);
    assert.ok(waiting, 'the abandoned message is still on the queue');
    assert.equal(waiting.deliveryCount, 2, 'two failed deliveries so far, as Service Bus counts them on the wire');
    assert.equal(attemptsOf(waiting), 0, 'an abandon leaves the body as it was');

    const got = await pyConsume(q);
    assert.equal(got.processed, 1);
    assert.equal(got.received[0].native.delivery_count, 2, 'azure-servicebus hands the wire value over unchanged');
    assert.equal(got.handled[0].envelope.attempts, 1, 'the Python SDK 1.24.0 reads DeliveryCount − 1 of the 0-based wire value: one behind the spec');
  });

  it('a retry with a backoff is a scheduled copy with attempts 1 in its body: the Python SDK reads 1, as we do', async () => {
    const q = queue();
    const ts = tsApp(q, { fail: 1, backoffMs: 200 });
    const id = await ts.app.publish(URN, DATA, { traceId: 'trace-backoff-ts' });
    assert.equal(await ts.app.consume({ maxMessages: 1, idleMs: 5000 }), 1);

    const got = await pyConsume(q);
    assert.equal(got.processed, 1, 'the scheduled copy became due within the consume deadline');
    assert.equal(got.received[0].native.delivery_count, 0, 'a fresh message, not a redelivery');
    const env = got.handled[0].envelope;
    assert.equal(env.attempts, 1);
    assert.equal(env.meta.id, id);
    assert.equal(env.trace_id, 'trace-backoff-ts');
    assertNativeToPython(got.received[0], { retryCopy: true });
  });

  it('the Python SDK retries by re-sending a copy (attempts 1, delivery-count 0) and completing the original, not by abandoning', async () => {
    const q = queue();
    const sent = await pyPublish(q, 'trace-resend-py');
    const failed = await pyConsume(q, '--fail', '1', '--max-attempts', '3');
    assert.equal(failed.handled.length, 1, 'the Python handler ran and failed');

    const waiting = await peekWire(url, q);
    assert.equal(waiting.length, 1, 'one message left: the copy (the original was completed)');
    assert.equal(waiting[0]!.deliveryCount, 0, 'never delivered: a new message, not the abandoned original');
    assert.equal(attemptsOf(waiting[0]!), 1);
    assert.deepEqual(typesOf(waiting[0]!), CONTRACT_TYPES, 'the copy carries the projection of its own body');
    const copy = JSON.parse(waiting[0]!.body!.toString('utf8'));
    assert.equal(copy.meta.id, sent.id);
  });
});
