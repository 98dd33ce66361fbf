/**
 * The RabbitMQ binding on the cluster lab's three nodes (`scripts/clusters up
 * rabbitmq-ha`, issue #30): a host list tried in turn, quorum queues, their
 * x-delivery-count and delivery limit, and a node SIGKILLed mid-stream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigurationError, createApp, silentLogger } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { cluster, clusterNode } from '../../../test/support/clusters.js';
import { until } from '../../../test/support/until.js';
import { queueType } from '../src/queue-type.js';
import { envelope, Raw, uniqueQueue } from './support/rabbit.js';

const URN = 'urn:babel:orders:created';
const ha = cluster('rabbitmq-ha');

describe('RabbitMQ cluster (rabbitmq-ha)', { skip: ha.skip }, () => {
  const url = ha.url!;
  // Node 3 is never killed here: the raw reader stays on it.
  const node3 = url.replace(/@.*$/, '@127.0.0.1:5693');
  let raw: Raw;
  const created: string[] = [];
  const queue = (prefix: string) => {
    const name = uniqueQueue(prefix);
    created.push(name, `${name}.dlq`);
    return name;
  };

  before(async () => {
    raw = await Raw.open(node3);
  });
  after(async () => {
    await raw.cleanup(...created);
    await raw.close();
  });

  it('a host list: a dead host first is skipped, the next one serves', async () => {
    const q = queue('bq-ha-hosts');
    const transport = new RabbitMqTransport({ url: url.replace('@', '@127.0.0.1:1,'), logger: silentLogger });
    try {
      await transport.connect({ timeoutMs: 30_000 });
      const { body, projection } = envelope(URN, { order_id: 1 }, q);
      await transport.publish({ body, queue: q, projection });
      await raw.waitForCount(q, 1, 30_000);
    } finally {
      await transport.close();
    }
  });

  it('queueType quorum declares the queue as a quorum queue', async () => {
    const q = queue('bq-ha-quorum');
    const transport = new RabbitMqTransport({ url, queueType: 'quorum', logger: silentLogger });
    try {
      const { body, projection } = envelope(URN, { order_id: 2 }, q);
      await transport.connect({ timeoutMs: 30_000 });
      await transport.publish({ body, queue: q, projection });
      // Redeclaring it as classic is refused, naming its type.
      const channel = await raw.model.createChannel();
      channel.on('error', () => undefined);
      await assert.rejects(channel.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'classic' } }), /current is 'quorum'/);
    } finally {
      await transport.close();
    }
  });

  it('a delayed publish rides a quorum delay queue (at-least-once dead-lettering) into the quorum work queue', async () => {
    const q = queue('bq-ha-delay');
    created.push(`${q}.delay.300`);
    const transport = new RabbitMqTransport({ url, queueType: 'quorum', logger: silentLogger });
    try {
      const { body, projection } = envelope(URN, { order_id: 4 }, q);
      await transport.connect({ timeoutMs: 30_000 });
      await transport.publish({ body, queue: q, projection, delayMs: 300 });
      await raw.waitForCount(q, 1, 30_000);
      const [message] = await raw.drain(q);
      assert.ok(message!.content.equals(body), 'the body arrives byte for byte');
      assert.equal(await queueType(raw.model, `${q}.delay.300`), 'quorum');
    } finally {
      await transport.close();
    }
  });

  it('attempts on a quorum queue count x-delivery-count: a message returned twice fails its third attempt and is dead-lettered', async () => {
    const q = queue('bq-ha-count');
    const transport = new RabbitMqTransport({ url, queueType: 'quorum', logger: silentLogger });
    const { body, projection } = envelope(URN, { order_id: 3 }, q);
    await transport.connect({ timeoutMs: 30_000 });
    await transport.publish({ body, queue: q, projection });
    // Twice taken and put back unsettled, as two workers killed mid-handler would.
    for (let i = 0; i < 2; i++) {
      let message: Awaited<ReturnType<typeof raw.channel.get>> = false;
      await until(async () => (message = await raw.channel.get(q, { noAck: false })) !== false, 30_000, 'the message');
      raw.channel.nack(message as Exclude<typeof message, false>, false, true);
    }
    const app = createApp({ transport, queue: q, maxAttempts: 3, deadLetter: true, logger: silentLogger });
    const attempts: number[] = [];
    app.handle(URN, (_data, message) => {
      attempts.push(message.attempts);
      throw new Error('still failing');
    });
    try {
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 30_000 }), 1);
    } finally {
      await app.close();
    }
    assert.deepEqual(attempts, [3], 'the two returns counted: this delivery is attempt 3 of 3');
    await raw.waitForCount(`${q}.dlq`, 1, 30_000);
    const [record] = await raw.drain(`${q}.dlq`);
    assert.equal(JSON.parse(record!.content.toString('utf8')).dead_letter.attempts, 3);
  });

  it('refuses to consume a quorum queue whose delivery limit is below maxAttempts, naming both', async () => {
    const q = queue('bq-ha-limit');
    const app = createApp({
      transport: new RabbitMqTransport({ url, queueType: 'quorum', deliveryLimit: 2, logger: silentLogger }),
      queue: q,
      maxAttempts: 5,
      logger: silentLogger,
    });
    try {
      await assert.rejects(app.consume({ maxMessages: 1, idleMs: 1000 }), (error: Error) => {
        assert.ok(error instanceof ConfigurationError, `a ConfigurationError, got ${error.name}`);
        assert.match(error.message, /delivery limit is 2 \(its x-delivery-limit argument\), below the App's maxAttempts of 5/);
        return true;
      });
    } finally {
      await app.close();
    }
    // The same limit on a queue declared elsewhere is read back too, whatever the transport declares.
    const other = createApp({ transport: new RabbitMqTransport({ url, logger: silentLogger }), queue: q, maxAttempts: 3, logger: silentLogger });
    try {
      await assert.rejects(other.consume({ maxMessages: 1, idleMs: 1000 }), /delivery limit is 2 .*maxAttempts of 3/);
    } finally {
      await other.close();
    }
    // At or above maxAttempts it consumes.
    const fine = createApp({ transport: new RabbitMqTransport({ url, logger: silentLogger }), queue: q, maxAttempts: 2, logger: silentLogger });
    try {
      assert.equal(await fine.consume({ maxMessages: 1, idleMs: 200 }), 0);
    } finally {
      await fine.close();
    }
  });

  it('a node SIGKILLed mid-stream: publishing and consuming move to the other nodes, nothing acknowledged is lost', async () => {
    const q = queue('bq-ha-failover');
    const N = 300;
    // Both connect to node 1 first (the head of the host list): it is the node killed.
    const producer = new RabbitMqTransport({ url, queueType: 'quorum', publishWhileDisconnected: 'wait', reconnect: { initialDelayMs: 50, maxDelayMs: 500 }, logger: silentLogger });
    const app = createApp({
      transport: new RabbitMqTransport({ url, queueType: 'quorum', reconnect: { initialDelayMs: 50, maxDelayMs: 500 }, logger: silentLogger }),
      queue: q,
      logger: silentLogger,
    });
    const seen = new Set<number>();
    app.handle(URN, (data) => void seen.add((data as { n: number }).n));
    const stop = new AbortController();
    const running = app.run({ signal: stop.signal, concurrency: 8 });
    let killed = false;
    try {
      await producer.connect({ timeoutMs: 30_000 });
      const acknowledged: number[] = [];
      for (let n = 0; n < N; n++) {
        if (n === N / 3) {
          await clusterNode('kill-node', 'rabbitmq-ha', '1');
          killed = true;
        }
        const { body, projection } = envelope(URN, { n }, q);
        await producer.publish({ body, queue: q, projection });
        acknowledged.push(n);
      }
      await until(() => seen.size === N, 120_000, `all ${N} acknowledged messages consumed (have ${seen.size})`, 100);
      assert.deepEqual([...seen].sort((a, b) => a - b), acknowledged);
    } finally {
      stop.abort();
      await running.catch(() => undefined);
      await app.close();
      await producer.close();
      if (killed) await clusterNode('restore-node', 'rabbitmq-ha', '1');
    }
  });
});
