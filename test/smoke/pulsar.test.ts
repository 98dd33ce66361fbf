// Smoke: the lab's Pulsar takes and gives back one message through its
// WebSocket API (the access path of the TypeScript binding), with properties.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { broker, uniqueQueue } from '../support/brokers.js';
import { within } from '../support/until.js';

const b = broker('pulsar');
/** Bounds every wait for the broker: a failure ends the test instead of hanging the file. */
const WAIT_MS = 30_000;

const sockets: WebSocket[] = [];

function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  sockets.push(ws);
  return within(new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  }), WAIT_MS, `the WebSocket ${url}`);
}

function next(ws: WebSocket): Promise<any> {
  return within(new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString())))), WAIT_MS, 'a WebSocket frame');
}

describe('smoke: pulsar', { skip: b.skip }, () => {
  it('produces over the WebSocket API and a Shared subscription reads the same bytes and properties', async () => {
    const base = new URL(b.url!);
    base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    const topic = `persistent/public/default/${uniqueQueue('smoke-pulsar')}`;
    const body = Buffer.from('{"job":"urn:babel:smoke:ping","data":{"s":"é"}}');

    try {
      const consumer = await open(new URL(`/ws/v2/consumer/${topic}/babelqueue?subscriptionType=Shared`, base).href);
      const producer = await open(new URL(`/ws/v2/producer/${topic}`, base).href);
      // Both listeners before the send: the delivery can reach its socket before the receipt reaches
      // the producer's, and a frame with no listener yet is dropped.
      const ack = next(producer);
      const delivered = next(consumer);
      producer.send(JSON.stringify({ payload: body.toString('base64'), properties: { 'bq-urn': 'urn:babel:smoke:ping' } }));
      const [receipt, msg] = await Promise.all([ack, delivered]);
      assert.equal(receipt.result, 'ok');
      assert.deepEqual(Buffer.from(msg.payload, 'base64'), body);
      assert.equal(msg.properties['bq-urn'], 'urn:babel:smoke:ping');
      assert.equal(msg.redeliveryCount, 0);
      consumer.send(JSON.stringify({ messageId: msg.messageId }));
    } finally {
      for (const ws of sockets.splice(0)) ws.terminate();
    }
  });
});
