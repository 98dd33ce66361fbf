// Smoke: the lab's ActiveMQ Artemis takes and gives back one AMQP 1.0 message
// through rhea, as an anycast queue, with its application properties.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import rhea, { type Connection, type EventContext } from 'rhea';
import { broker, uniqueQueue } from '../support/brokers.js';
import { within } from '../support/until.js';

const b = broker('artemis');
/** Bounds every wait for the broker: a failure ends the test instead of hanging the file. */
const WAIT_MS = 30_000;

function open(url: string): Promise<Connection> {
  const u = new URL(url);
  const connection = rhea.create_container({ id: 'babelqueue-smoke' }).connect({
    host: u.hostname,
    port: Number(u.port),
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    reconnect: false,
  });
  return within(new Promise<Connection>((resolve, reject) => {
    connection.once('connection_open', () => resolve(connection));
    connection.once('connection_error', (ctx: EventContext) => reject(ctx.connection.error));
    connection.once('disconnected', (ctx: EventContext) => reject(ctx.error ?? new Error('disconnected')));
  }), WAIT_MS, 'the AMQP connection').catch((error: unknown) => {
    connection.close();
    throw error;
  });
}

describe('smoke: artemis', { skip: b.skip }, () => {
  it('sends to an anycast queue and receives the same bytes and properties', async () => {
    const connection = await open(b.url!);
    const closed = new Promise((resolve) => connection.once('connection_close', resolve));
    try {
      const address = uniqueQueue('smoke-artemis');
      const body = Buffer.from('{"job":"urn:babel:smoke:ping","data":{"s":"é"}}');

      const receiver = connection.open_receiver({ source: { address, capabilities: ['queue'] }, autoaccept: false });
      const received = new Promise<EventContext>((resolve) => receiver.once('message', resolve));
      await within(new Promise((resolve) => receiver.once('receiver_open', resolve)), WAIT_MS, 'the receiver');

      const sender = connection.open_sender({ target: { address, capabilities: ['queue'] } });
      const accepted = new Promise((resolve, reject) => {
        sender.once('accepted', resolve);
        sender.once('rejected', (ctx: EventContext) => reject(ctx.delivery?.remote_state?.error));
      });
      sender.once('sendable', () => {
        sender.send({
          body: rhea.message.data_section(body),
          content_type: 'application/json',
          application_properties: { 'bq-urn': 'urn:babel:smoke:ping' },
        });
      });
      await within(accepted, WAIT_MS, 'the send to be accepted');

      const ctx = await within(received, WAIT_MS, 'the message');
      assert.deepEqual(Buffer.from(ctx.message!.body.content), body);
      assert.equal(ctx.message!.application_properties?.['bq-urn'], 'urn:babel:smoke:ping');
      ctx.delivery!.accept();
    } finally {
      connection.close();
      await within(closed, WAIT_MS, 'the connection to close');
    }
  });
});
