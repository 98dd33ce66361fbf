// The binary-protocol consumer against a scripted stand-in broker (not Pulsar:
// test/support/scripted-broker.ts), for faults the lab's standalone cannot
// produce on demand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { until } from '../../../test/support/until.js';
import { captureLogger } from './support/pulsar.js';
import { scriptedBroker } from './support/scripted-broker.js';

const WAIT_MS = 30_000;

describe('Pulsar binary-protocol consumer against a scripted broker', () => {
  it('a consumer closed in the same write that confirms its subscription subscribes again and consumes', async () => {
    const broker = await scriptedBroker([Buffer.from('{"n":1}')]);
    broker.closeOnSubscribe = (n) => n === 1;
    const logger = captureLogger();
    const transport = new PulsarTransport({
      // The web service is never asked: consuming needs only the binary service.
      url: 'http://127.0.0.1:9',
      serviceUrl: broker.url,
      consumerProtocol: 'binary',
      reconnect: { initialDelayMs: 10, maxDelayMs: 50, multiplier: 2 },
      logger,
    });
    const bodies: string[] = [];
    try {
      const stop = AbortSignal.timeout(WAIT_MS);
      await transport.consume('scripted', async (delivery) => {
        bodies.push(delivery.body.toString('utf8'));
        await delivery.settle({ kind: 'ack' });
      }, { concurrency: 1, maxMessages: 1, signal: stop });
      assert.ok(!stop.aborted, 'consume ended by its drain, not the deadline');
    } finally {
      await transport.close();
    }
    assert.deepEqual(bodies, ['{"n":1}']);
    assert.equal(broker.subscribes.length, 2, 'subscribed again after the close');
    assert.match(logger.text(), /Pulsar closed the consumer/);
    await until(() => broker.acks.length === 1, WAIT_MS, 'the ack to reach the broker');
    assert.deepEqual(broker.acks, ['7:0']);
    await broker.stop();
  });

  it('a transport with no web service at hand still consumes: the scripted broker alone serves a drain of three', async () => {
    const broker = await scriptedBroker(['a', 'b', 'c'].map((x) => Buffer.from(x)));
    const transport = new PulsarTransport({ url: 'http://127.0.0.1:9', serviceUrl: broker.url, consumerProtocol: 'binary', logger: silentLogger });
    const bodies: string[] = [];
    try {
      await transport.consume('scripted', async (delivery) => {
        bodies.push(delivery.body.toString('utf8'));
        await delivery.settle({ kind: 'ack' });
      }, { concurrency: 2, maxMessages: 3, signal: AbortSignal.timeout(WAIT_MS) });
    } finally {
      await transport.close();
    }
    assert.deepEqual(bodies, ['a', 'b', 'c']);
    await until(() => broker.acks.length === 3, WAIT_MS, 'the acks to reach the broker');
    await broker.stop();
  });
});
