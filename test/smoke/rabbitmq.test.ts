// Smoke: the lab's RabbitMQ takes and gives back one message through amqplib.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ChannelModel } from 'amqplib';
import { broker, uniqueQueue } from '../support/brokers.js';

const b = broker('rabbitmq');

describe('smoke: rabbitmq', { skip: b.skip }, () => {
  let connection: ChannelModel;
  before(async () => {
    connection = await connect(b.url!);
  });
  after(async () => {
    await connection.close();
  });

  it('publishes to a queue and basic.gets the same bytes and headers back', async () => {
    const channel = await connection.createConfirmChannel();
    const q = uniqueQueue('smoke-rabbit');
    await channel.assertQueue(q, { durable: false });
    const body = Buffer.from('{"job":"urn:babel:smoke:ping","data":{"s":"é"}}');
    channel.sendToQueue(q, body, { contentType: 'application/json', headers: { 'bq-urn': 'urn:babel:smoke:ping' } });
    await channel.waitForConfirms();
    const got = await channel.get(q, { noAck: false });
    assert.ok(got, 'a message is waiting');
    assert.deepEqual(got.content, body);
    assert.equal(got.properties.contentType, 'application/json');
    assert.equal(got.properties.headers?.['bq-urn'], 'urn:babel:smoke:ping');
    channel.ack(got);
    await channel.deleteQueue(q);
    await channel.close();
  });
});
