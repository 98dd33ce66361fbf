// Interop with the Python SDK (ArtemisTransport over python-qpid-proton) on the
// lab's ActiveMQ Artemis: anycast queues, DLQ `<queue>.dlq`, the URL spelled
// artemis://user:pass@host:port on both sides.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import rhea, { type EventContext, type Message as AmqpMessage } from 'rhea';
import { ArtemisTransport } from '@babelqueue/artemis';
import { silentLogger } from '@babelqueue/core';
import { broker, uniqueQueue } from '../support/brokers.js';
import { describeInterop } from './support/scenarios.js';
import { bytes, pythonPeer } from './support/python-peer.js';

const lab = broker('artemis');
const url = lab.url?.replace(/^amqp:/, 'artemis:');

describeInterop({
  name: 'artemis',
  broker: { ...lab, url },
  transport: (u) => new ArtemisTransport({ url: u, logger: silentLogger }),
  async prepare(u, queues) {
    // Our links carry the queue capability: attaching creates each queue ANYCAST.
    const transport = new ArtemisTransport({ url: u, logger: silentLogger });
    try {
      for (const q of queues) await transport.purge(q);
    } finally {
      await transport.close();
    }
  },
  native: {
    // The Python SDK writes the bq_ application properties; our consumer hands them over.
    fromPython(m) {
      assert.equal(m.headers.bq_schema_version, '1');
      assert.equal(m.headers.bq_source_lang, 'python');
      assert.equal(m.headers.bq_attempts, '0');
      assert.equal(m.headers.bq_app_id, 'babelqueue');
    },
  },
});

const peer = pythonPeer('artemis (Python SDK)');

describe("interop over artemis: the Python SDK's projection, read back with rhea", { skip: lab.skip || peer.skip }, () => {
  const queues: string[] = [];
  after(async () => {
    const transport = new ArtemisTransport({ url: url!, logger: silentLogger });
    for (const q of queues) await transport.purge(q).catch(() => 0);
    await transport.close();
  });

  it('x-opt-jms-type = URN, correlation-id = trace_id, creation-time = created_at, the same bq_ properties as ours, the body an AMQP-value string', async () => {
    const q = uniqueQueue('interop-artemis-native');
    queues.push(q);
    const transport = new ArtemisTransport({ url: url!, logger: silentLogger });
    await transport.purge(q);
    await transport.close();
    const sent = await peer.run(['publish', '--url', url!, '--queue', q, '--urn', 'urn:babel:interop:native', '--data', '{"n":1}', '--trace-id', 'trace-native']);
    const message = await takeOne(url!, q);
    const env = JSON.parse(bytes(sent.body).toString('utf8'));
    assert.equal(typeof message.body, 'string');
    assert.ok(Buffer.from(message.body as string, 'utf8').equals(bytes(sent.body)), 'the bytes the SDK sent');
    assert.equal(message.message_annotations?.['x-opt-jms-type'], 'urn:babel:interop:native');
    assert.equal(message.correlation_id, 'trace-native');
    assert.equal((message.creation_time as Date).getTime(), env.meta.created_at);
    assert.deepEqual(message.application_properties, { bq_schema_version: '1', bq_source_lang: 'python', bq_attempts: '0', bq_app_id: 'babelqueue' });
  });
});

async function takeOne(u: string, queue: string): Promise<AmqpMessage> {
  const parsed = new URL(u);
  const connection = rhea.create_container().connect({
    host: parsed.hostname,
    port: Number(parsed.port),
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    reconnect: false,
  });
  try {
    return await new Promise<AmqpMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message within 10 s')), 10_000);
      const receiver = connection.open_receiver({ source: { address: queue, capabilities: ['queue'] }, autoaccept: true });
      receiver.once('message', (context: EventContext) => {
        clearTimeout(timer);
        resolve(context.message!);
      });
    });
  } finally {
    connection.close();
    const internal = connection as unknown as { socket?: unknown; abort_socket?: (socket: unknown) => void };
    setTimeout(() => internal.abort_socket?.(internal.socket), 200);
  }
}
