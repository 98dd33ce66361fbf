// Differential conformance over ActiveMQ Artemis: anycast queues created first
// (our links carry the queue capability; the Python SDK's first attach would
// otherwise make a multicast address), DLQ `<queue>.dlq`, the native schema
// version in the `bq_schema_version` application property. The rows are sent
// with rhea, not our publishRaw, which projects a valid envelope's own
// metadata (its schema version included) over the headers it is given.
import { isUtf8 } from 'node:buffer';
import rhea, { type EventContext } from 'rhea';
import { silentLogger } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { broker } from '../support/brokers.js';
import { describeDifferential } from './support/driver.js';
import { inspectWith } from './support/inspect.js';

const lab = broker('artemis');
const transport = (url: string, _queue?: string) => new ArtemisTransport({ url, logger: silentLogger });

/** Sends one message as a plain AMQP client would: the body (a string when it is UTF-8), the given application properties and nothing else. */
async function sendRaw(url: string, queue: string, body: Buffer, headers: Record<string, string>): Promise<void> {
  const parsed = new URL(url);
  const connection = rhea.create_container().connect({
    host: parsed.hostname,
    port: Number(parsed.port),
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    reconnect: false,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no settlement from Artemis for ${queue} within 20 s`)), 20_000);
      const sender = connection.open_sender({ target: { address: queue, capabilities: ['queue'] } });
      sender.once('sendable', () => {
        sender.send({
          durable: true,
          body: isUtf8(body) ? body.toString('utf8') : rhea.message.data_section(body),
          content_type: 'application/json',
          application_properties: { ...headers },
        });
      });
      sender.once('accepted', () => {
        clearTimeout(timer);
        resolve();
      });
      sender.once('rejected', (context: EventContext) => {
        clearTimeout(timer);
        reject(new Error(`Artemis rejected the message: ${JSON.stringify(context.delivery?.remote_state)}`));
      });
    });
  } finally {
    connection.close();
  }
}

describeDifferential({
  name: 'artemis',
  broker: { ...lab, url: lab.url?.replace(/^amqp:/, 'artemis:') },
  transport,
  versionKey: 'bq_schema_version',
  // Each consumer asks the broker's management for max-delivery-attempts when its link attaches;
  // with some fifty consumers attaching at once on two busy cores, 5 s of idling was seen to end
  // a consumer before its one message arrived.
  idleMs: 10_000,
  publish: sendRaw,
  inspect: (url, queue, dlq) => inspectWith(transport(url), queue, dlq),
  async prepare(url, queues) {
    const t = transport(url);
    try {
      for (const q of queues) await t.purge(q);
    } finally {
      await t.close();
    }
  },
  async cleanup(url, queues) {
    const t = transport(url);
    try {
      for (const q of queues) await t.purge(q).catch(() => 0);
    } finally {
      await t.close();
    }
  },
});
