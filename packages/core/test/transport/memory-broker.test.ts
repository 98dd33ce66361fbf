import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InMemoryTransport, MemoryBroker } from '@babelqueue/core';
import { reconcileAttempts, type Delivery } from '@babelqueue/core/binding';

const msg = (text: string) => ({ body: Buffer.from(text), headers: {}, key: null, redeliveries: 0 });

describe('MemoryBroker: a faithful little broker', () => {
  test('FIFO, delayed messages become ready when due', () => {
    let now = 1_000;
    const broker = new MemoryBroker(() => now);
    broker.push('q', msg('a'));
    broker.push('q', msg('late'), 500);
    broker.push('q', msg('b'));
    assert.deepEqual(broker.take('q', 10, 30_000).map((t) => t.message.body.toString()), ['a', 'b']);
    assert.deepEqual(broker.stats('q'), { ready: 0, delayed: 1, inFlight: 2 });
    now += 500;
    assert.deepEqual(broker.take('q', 10, 30_000).map((t) => t.message.body.toString()), ['late']);
  });

  test('an expired lease returns the message with its redelivery count raised; the old ack is refused', () => {
    let now = 0;
    const broker = new MemoryBroker(() => now);
    broker.push('q', msg('a'));
    const [first] = broker.take('q', 1, 100);
    now += 100;
    const [second] = broker.take('q', 1, 100);
    assert.ok(first && second, "first && second");
    assert.equal(second.message.redeliveries, 1);
    assert.equal(broker.ack('q', first.leaseId), false, 'expired lease');
    assert.equal(broker.ack('q', second.leaseId), true);
    assert.deepEqual(broker.stats('q'), { ready: 0, delayed: 0, inFlight: 0 });
  });

  test('release puts a message back (counted), purge empties ready and delayed', () => {
    const broker = new MemoryBroker();
    broker.push('q', msg('a'));
    broker.push('q', msg('b'), 10_000);
    const [lease] = broker.take('q', 1, 100);
    assert.equal(broker.release('q', lease!.leaseId), true);
    assert.equal(broker.release('q', lease!.leaseId), false);
    assert.equal(broker.ready('q')[0]!.redeliveries, 1);
    assert.equal(broker.purge('q'), 2);
    assert.deepEqual(broker.queueNames(), ['q']);
  });

  test('waitFor wakes on push and on abort', async () => {
    // A wait of ten minutes: returning at all within the test shows it woke early.
    const broker = new MemoryBroker();
    setTimeout(() => broker.push('q', msg('a')), 20);
    await broker.waitFor('q', 600_000, new AbortController().signal);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    await broker.waitFor('other', 600_000, controller.signal);
  });
});

describe('InMemoryTransport deliveries', () => {
  test('reconcile attempts as max(body, redeliveries); browse and purge', async () => {
    const transport = new InMemoryTransport({ visibilityTimeoutMs: 20, redeliveryDelayMs: 0 });
    await transport.publishRaw('q', Buffer.from('x'));
    const seen: Delivery[] = [];
    const grab = () => transport.consume('q', async (d) => void seen.push(d), {
      concurrency: 1, signal: new AbortController().signal, maxMessages: 1, idleMs: 200,
    });
    await grab(); // never settled: the lease expires
    await grab();
    assert.equal(seen.length, 2);
    assert.equal(seen[0]!.nativeAttempts, 0);
    assert.equal(seen[1]!.nativeAttempts, 1, 'the expired lease counted a delivery');
    assert.equal(reconcileAttempts(transport.rules.attempts, 0, seen[1]!.nativeAttempts), 1);
    assert.equal(reconcileAttempts(transport.rules.attempts, 5, seen[1]!.nativeAttempts), 5);
    await seen[1]!.settle({ kind: 'native-dead-letter', why: 'test' });
    assert.deepEqual(await transport.browse('q', 5), [Buffer.from('x')]);
    assert.equal(await transport.purge('q'), 1);
    await transport.close();
  });
});

describe('InMemoryTransport scan, depth and remove (the DLQ console contract)', () => {
  const fill = async (transport: InMemoryTransport, n: number) => {
    for (let i = 0; i < n; i++) await transport.publishRaw('dlq', Buffer.from(`r${i}`), { traceparent: `t${i}` });
  };

  test('scan reads every ready record in order from an offset, across batches, and consumes nothing', async () => {
    const transport = new InMemoryTransport();
    await fill(transport, 1203);
    const seen: { body: string; index: number; header: unknown }[] = [];
    for await (const record of transport.scan('dlq', { offset: 498 })) {
      seen.push({ body: record.body.toString(), index: record.index, header: record.headers.traceparent });
    }
    assert.equal(seen.length, 1203 - 498);
    assert.deepEqual(seen[0], { body: 'r498', index: 498, header: 't498' });
    assert.deepEqual(seen.at(-1), { body: 'r1202', index: 1202, header: 't1202' });
    assert.equal(await transport.depth('dlq'), 1203);
    assert.deepEqual(transport.broker.stats('dlq'), { ready: 1203, delayed: 0, inFlight: 0 });
  });

  test('scan of an absent queue is empty; breaking out early and aborting end it', async () => {
    const transport = new InMemoryTransport();
    for await (const _ of transport.scan('nothing-here')) assert.fail('an absent queue has no records');
    assert.equal(await transport.depth('nothing-here'), 0);
    await fill(transport, 10);
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const record of transport.scan('dlq', { signal: controller.signal })) {
      seen.push(record.index);
      if (record.index === 2) controller.abort();
    }
    assert.deepEqual(seen, [0, 1, 2]);
  });

  test('remove takes out exactly one record with the same bytes; a second remove of a gone record is false', async () => {
    const transport = new InMemoryTransport();
    await fill(transport, 3);
    await transport.publishRaw('dlq', Buffer.from('r1'));
    assert.equal(await transport.remove('dlq', Buffer.from('r1')), true);
    assert.deepEqual(transport.messages('dlq').map(String), ['r0', 'r2', 'r1']);
    assert.equal(await transport.remove('dlq', Buffer.from('r1')), true);
    assert.equal(await transport.remove('dlq', Buffer.from('r1')), false);
    assert.deepEqual(transport.messages('dlq').map(String), ['r0', 'r2']);
  });
});
