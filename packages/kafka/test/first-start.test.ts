import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp, redrive, silentLogger } from '@babelqueue/core';
import { captureLogger } from '../../../test/support/capture-logger.js';
import { Lab, kafka, until, uniqueQueue } from './support/kafka-lab.js';

const URN = 'urn:babel:orders:created';

/**
 * First start on a topic nobody created yet (issue #19): the worker must not
 * crash ("This server does not host this topic-partition") and must handle
 * what is published once it runs. With `createTopics` (the default) the
 * transport creates the work topic, `<topic>.dlq` and, with tiers, the tier
 * topics before it subscribes.
 */
describe('Kafka first start on a fresh topic (real broker)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  for (const tiers of [[], [200, 1000]]) {
    it(`${tiers.length > 0 ? 'with' : 'without'} retry tiers: creates its topics, subscribes and handles what is published`, async () => {
      const topic = uniqueQueue('first-start');
      assert.equal(await lab.exists(topic), false);
      const handled: number[] = [];
      const app = createApp({ transport: lab.transport({ retryTiersMs: tiers }), queue: topic, maxAttempts: 2, logger: silentLogger })
        .handle(URN, (_data, message) => {
          handled.push(message.attempts);
          if (tiers.length > 0 && message.attempts === 1) throw new Error('first attempt fails: the tiers are used');
        });
      const stop = new AbortController();
      let crashed: unknown;
      const run = app.run({ signal: stop.signal }).catch((error: unknown) => {
        crashed = error;
      });
      try {
        await until(() => crashed !== undefined || lab.exists(topic), 20_000, `${topic} to be created by the worker`);
        await app.publish(URN, { order_id: 1 });
        const expected = tiers.length > 0 ? [1, 2] : [1];
        await until(() => crashed !== undefined || handled.length === expected.length, 30_000, 'the message to be handled');
        assert.equal(crashed, undefined, 'the first start did not crash');
        assert.deepEqual(handled, expected);
      } finally {
        stop.abort();
        await run;
        await app.close();
      }
      const created = [topic, `${topic}.dlq`, ...tiers.map((_, i) => `${topic}.retry.${i + 1}`)];
      for (const name of created) assert.equal(await lab.exists(name), true, `${name} exists`);
    });
  }

  it('a topic that is itself a DLQ (a drain of orders.dlq) gets no DLQ of its own', async () => {
    const dlq = `${uniqueQueue('first-start')}.dlq`;
    const app = createApp({ transport: lab.transport(), queue: dlq, logger: silentLogger });
    try {
      assert.equal(await app.consume({ idleMs: 500 }), 0);
    } finally {
      await app.close();
    }
    assert.equal(await lab.exists(dlq), true, 'the consumed topic was created');
    assert.equal(await lab.exists(`${dlq}.dlq`), false, 'no DLQ of a DLQ');
  });

  it('a DLQ drained (redrive) with retry tiers configured grows no retry tiers of its own', async () => {
    const dlq = `${uniqueQueue('first-start')}.dlq`;
    await lab.createTopics([{ topic: dlq }]);
    await lab.produce(dlq, [{ value: Buffer.from('not a record') }]);
    const transport = lab.transport({ retryTiersMs: [200, 1000] });
    const result = await redrive(transport, { from: dlq, max: 1, idleMs: 30_000 });
    await transport.close();
    assert.deepEqual([result.redriven, result.skipped], [0, 1], 'the undecodable record was restored');
    for (const tier of [1, 2]) assert.equal(await lab.exists(`${dlq}.retry.${tier}`), false, `no ${dlq}.retry.${tier}`);
    assert.equal(await lab.exists(`${dlq}.dlq`), false, 'no DLQ of a DLQ');
  });

  it('a worker on a DLQ with retry tiers configured drops poison and leaves a failed record for redelivery, never on a tier of the DLQ', async () => {
    const dlq = `${uniqueQueue('first-start')}.dlq`;
    await lab.createTopics([{ topic: dlq }]);
    // Poison ahead of the envelope: with no tier to retry on it must not block the partition.
    await lab.produce(dlq, [{ value: Buffer.from('{"raw":"not json","dead_letter":{"reason":"poison"}}') }]);
    const attempts: number[] = [];
    const app = createApp({ transport: lab.transport({ retryTiersMs: [200, 1000], redeliveryDelayMs: 100 }), queue: dlq, maxAttempts: 3, logger: silentLogger })
      .handle(URN, (_data, message) => {
        attempts.push(message.attempts);
        if (attempts.length === 1) throw new Error('the first delivery fails');
      });
    const stop = new AbortController();
    let crashed: unknown;
    const run = app.run({ signal: stop.signal }).catch((error: unknown) => {
      crashed = error;
    });
    try {
      await app.publish(URN, { order_id: 1 });
      await until(() => crashed !== undefined || attempts.length === 2, 30_000, 'the record to be delivered again');
      assert.equal(crashed, undefined, 'the worker did not crash');
    } finally {
      stop.abort();
      await run;
      await app.close();
    }
    for (const tier of [1, 2]) assert.equal(await lab.exists(`${dlq}.retry.${tier}`), false, `no ${dlq}.retry.${tier}`);
  });

  it('with createTopics off, the worker waits for its topic instead of crashing, and creates nothing', async () => {
    const topic = uniqueQueue('first-start-off');
    const logger = captureLogger();
    let handled = 0;
    const app = createApp({ transport: lab.transport({ createTopics: false, logger }), queue: topic, logger })
      .handle(URN, () => void handled++);
    const stop = new AbortController();
    let crashed: unknown;
    const run = app.run({ signal: stop.signal }).catch((error: unknown) => {
      crashed = error;
    });
    try {
      await until(() => crashed !== undefined || logger.lines.some((l) => /topic not there yet/.test(l.message)), 20_000, 'the worker to wait');
      // The topic's owner creates it: the waiting worker subscribes and consumes.
      await lab.createTopics([{ topic }]);
      await app.publish(URN, {});
      await until(() => crashed !== undefined || handled === 1, 30_000, 'the message to be handled');
      assert.equal(crashed, undefined);
    } finally {
      stop.abort();
      await run;
      await app.close();
    }
    assert.equal(await lab.exists(`${topic}.dlq`), false, 'nothing else was created');
  });
});
