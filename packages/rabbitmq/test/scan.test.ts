import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger, type ScannedRecord } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { Raw, rabbit, uniqueQueue } from './support/rabbit.js';

async function all(iterable: AsyncIterable<ScannedRecord>): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of iterable) out.push(record);
  return out;
}

describe('RabbitMQ scan and depth (the DLQ console): a basic.get window, released in place', { skip: rabbit.skip }, () => {
  const url = rabbit.url!;
  let raw: Raw;
  let transport: RabbitMqTransport;
  const queues: string[] = [];
  const queue = (prefix: string) => {
    const name = uniqueQueue(prefix);
    queues.push(name);
    return name;
  };

  before(async () => {
    raw = await Raw.open(url);
    transport = new RabbitMqTransport({ url, logger: silentLogger, scanWindow: 8 });
  });
  after(async () => {
    await transport.close();
    await raw.cleanup(...queues);
    await raw.close();
  });

  it('reads from an offset with headers and properties, then every message is back in its place', async () => {
    const q = queue('bq-rmq-scan');
    const bodies = Array.from({ length: 5 }, (_, n) => Buffer.from(`{"n":${n}}`));
    for (const [n, body] of bodies.entries()) await transport.publishRaw(q, body, { traceparent: `tp-${n}` });
    assert.equal(await transport.depth(q), 5);
    const records = await all(transport.scan(q, { offset: 2 }));
    assert.deepEqual(records.map((r) => [r.index, String(r.body)]), [[2, '{"n":2}'], [3, '{"n":3}'], [4, '{"n":4}']]);
    assert.equal(records[0]!.headers.traceparent, 'tp-2');
    assert.equal(records[0]!.headers['amqp.content_type'], 'application/json');
    assert.equal(await transport.depth(q), 5, 'the window was released');
    assert.deepEqual((await raw.drain(q)).map((m) => String(m.content)), bodies.map(String), 'in the original order');
  });

  it('breaking out early releases what it held; a scan stops at scanWindow; an absent queue is empty', async () => {
    const q = queue('bq-rmq-scan-window');
    for (let n = 0; n < 12; n++) await transport.publishRaw(q, Buffer.from(`{"n":${n}}`));
    for await (const record of transport.scan(q)) {
      if (record.index === 1) break;
    }
    assert.equal(await transport.depth(q), 12);
    assert.equal((await all(transport.scan(q))).length, 8, 'scanWindow 8');
    assert.equal(await transport.depth(q), 12);
    assert.deepEqual(await all(transport.scan('bq-rmq-no-such-queue')), []);
    assert.equal(await transport.depth('bq-rmq-no-such-queue'), 0);
  });

  it('refuses a scanWindow below 1', () => {
    assert.throws(() => new RabbitMqTransport({ url, scanWindow: 0 }), /scanWindow must be an integer >= 1/);
  });
});
