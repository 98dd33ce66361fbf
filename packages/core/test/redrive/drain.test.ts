import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { drainQueue, InMemoryTransport, type ConsumeOptions, type Decision, type Transport } from '@babelqueue/core';
import { type Delivery } from '@babelqueue/core/binding';

function fakeDelivery(name: string, settled: [string, Decision['kind']][]): Delivery {
  return {
    body: Buffer.from(name),
    queue: 'q',
    headers: {},
    settle: async (decision) => {
      settled.push([name, decision.kind]);
    },
  };
}

/** A transport whose consume loop is scripted by the test. */
function scripted(consume: Transport['consume']): Transport {
  const memory = new InMemoryTransport();
  return { rules: memory.rules, capabilities: memory.capabilities, target: memory.target, connect: async () => undefined, publish: (m) => memory.publish(m), consume, close: async () => undefined };
}

describe('drainQueue: take, hold unsettled, then work', () => {
  test('holds every taken delivery until the drain ends, so nothing is taken twice', async () => {
    const transport = new InMemoryTransport({ redeliveryDelayMs: 0 });
    for (const body of ['a', 'b', 'c']) await transport.publishRaw('q', Buffer.from(body));
    const streamed: string[] = [];
    const seen = await drainQueue(transport, 'q', { max: 10, idleMs: 30, onTaken: (d) => streamed.push(d.body.toString()) }, async (taken) => {
      assert.deepEqual(transport.broker.stats('q'), { ready: 0, delayed: 0, inFlight: 3 });
      // Writing back while the batch is held: the loop has stopped, so these are not met again.
      for (const d of taken) {
        await transport.publishRaw('q', d.body);
        await d.settle({ kind: 'ack' });
      }
      return taken.map((d) => d.body.toString());
    });
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.deepEqual(streamed, ['a', 'b', 'c']);
    assert.deepEqual(transport.messages('q').map(String), ['a', 'b', 'c']);
  });

  test('aborting the signal ends the drain with what was taken (no idle limit needed)', async () => {
    const transport = new InMemoryTransport();
    await transport.publishRaw('q', Buffer.from('a'));
    const controller = new AbortController();
    const result = drainQueue(transport, 'q', { max: 10, signal: controller.signal, onTaken: () => controller.abort() }, async (taken) => {
      for (const d of taken) await d.settle({ kind: 'unsettled', why: 'peek' });
      return taken.length;
    });
    assert.equal(await result, 1);
    assert.equal(transport.broker.stats('q').inFlight, 0);
  });

  test('asks the transport to take in the broker\'s order, with the whole batch in flight', async () => {
    let asked: ConsumeOptions | undefined;
    const transport = scripted(async (_queue, _onDelivery, options) => {
      asked = options;
    });
    await drainQueue(transport, 'q', { max: 7, idleMs: 20 }, async (taken) => taken.length);
    assert.equal(asked?.inOrder, true);
    assert.equal(asked?.concurrency, 7);
    assert.equal(asked?.maxMessages, 7);
  });

  test('an already aborted signal takes nothing', async () => {
    const transport = new InMemoryTransport();
    await transport.publishRaw('q', Buffer.from('a'));
    const taken = await drainQueue(transport, 'q', { max: 10, signal: AbortSignal.abort() }, async (t) => t.length);
    assert.equal(taken, 0);
    assert.equal(transport.messages('q').length, 1);
  });

  test('the idle limit counts from the first delivery: a transport slow to start (Kafka joining its group) is waited for', async () => {
    const settled: [string, Decision['kind']][] = [];
    const transport = scripted(async (_queue, onDelivery, options) => {
      await new Promise((resolve) => setTimeout(resolve, 120));
      const held = onDelivery(fakeDelivery('slow-start', settled));
      await new Promise<void>((resolve) => options.signal.addEventListener('abort', () => resolve(), { once: true }));
      await held;
    });
    const names = await drainQueue(transport, 'q', { max: 5, idleMs: 20 }, async (taken) => {
      for (const d of taken) await d.settle({ kind: 'ack' });
      return taken.map((d) => d.body.toString());
    });
    assert.deepEqual(names, ['slow-start']);
  });

  test('a delivery handed over after the drain ended is left unsettled at once', async () => {
    const settled: [string, Decision['kind']][] = [];
    const transport = scripted(async (_queue, onDelivery, options) => {
      const first = onDelivery(fakeDelivery('first', settled));
      await new Promise<void>((resolve) => options.signal.addEventListener('abort', () => resolve(), { once: true }));
      await onDelivery(fakeDelivery('late', settled));
      await first;
    });
    const names = await drainQueue(transport, 'q', { max: 5, idleMs: 20 }, async (taken) => {
      for (const d of taken) await d.settle({ kind: 'ack' });
      return taken.map((d) => d.body.toString());
    });
    assert.deepEqual(names, ['first']);
    assert.deepEqual(settled.sort(), [['first', 'ack'], ['late', 'unsettled']]);
  });

  test('a consume loop that fails before the drain ends rejects; taken deliveries stay unsettled and work never runs', async () => {
    const settled: [string, Decision['kind']][] = [];
    const transport = scripted(async (_queue, onDelivery) => {
      void onDelivery(fakeDelivery('held', settled));
      throw new Error('connection lost');
    });
    let worked = false;
    await assert.rejects(drainQueue(transport, 'q', { max: 5, idleMs: 1000 }, async () => { worked = true; }), /connection lost/);
    assert.equal(worked, false);
    assert.deepEqual(settled, []);
  });

  test('an error from work is rethrown after the consume loop has finished', async () => {
    const transport = new InMemoryTransport();
    await transport.publishRaw('q', Buffer.from('a'));
    await assert.rejects(drainQueue(transport, 'q', { max: 1 }, async (taken) => {
      await taken[0]!.settle({ kind: 'ack' });
      throw new Error('work failed');
    }), /work failed/);
    assert.deepEqual(transport.broker.stats('q'), { ready: 0, delayed: 0, inFlight: 0 });
  });
});
