import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp, drainQueue, redrive, silentLogger, type DropEvent, type Envelope } from '@babelqueue/core';
import { Lab, kafka, runUntil, text, until } from './support/kafka-lab.js';

const b = (s: string) => Buffer.from(s, 'utf8');
const URN = 'urn:babel:orders:created';
/** Bounds a drain that stops at maxMessages: only a failing run waits this long. */
const IDLE_MS = 30_000;
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** A canonical envelope body written by "another SDK". */
function envelope(id: string, attempts = 0, data: Record<string, unknown> = {}): Buffer {
  return b(JSON.stringify({
    job: URN,
    trace_id: `trace-${id}`,
    data,
    meta: { id, queue: 'orders', lang: 'go', schema_version: 1, created_at: 1749132727000 },
    attempts,
  }));
}

describe('Kafka consume (real broker)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('version gate: bq-schema-version other than "1" never reaches a handler; with a DLQ the raw bytes go there', async () => {
    const topic = await lab.topic('gate');
    const undecodable = Buffer.from([0xff, 0x00, 0x7b]);
    await lab.produce(topic, [
      { value: undecodable, key: b('k'), headers: { 'bq-schema-version': b('2'), 'bq-attempts': b('0'), traceparent: b('tp') } },
      { value: envelope('blank-header'), headers: { 'bq-schema-version': b(' ') } },
      { value: envelope('one'), headers: { 'bq-schema-version': b('1') } },
      // Only the exact "1" passes: " 1 " is gated, never trimmed.
      { value: envelope('spaced'), headers: { 'bq-schema-version': b(' 1 ') } },
    ]);
    const handled: string[] = [];
    const app = createApp({ transport: lab.transport(), queue: topic, deadLetter: true, logger: silentLogger })
      .handle(URN, (_data, msg) => void handled.push(msg.id));
    assert.equal(await app.consume({ maxMessages: 4, idleMs: IDLE_MS }), 4);
    await app.close();
    assert.deepEqual(handled, ['blank-header', 'one'], 'a blank header decodes normally (null-valued: see the unit table; kafkajs cannot write one)');

    const [dead] = await lab.read(`${topic}.dlq`, 1);
    assert.deepEqual(dead!.value, undecodable, 'the version-gated record is the raw body, no dead_letter block');
    assert.deepEqual(dead!.key, b('k'));
    assert.equal(text(dead!.headers, 'traceparent'), 'tp');
    assert.equal(text(dead!.headers, 'bq-schema-version'), undefined);
    const [, spaced] = await lab.read(`${topic}.dlq`, 2);
    assert.deepEqual(spaced!.value, envelope('spaced'), 'a " 1 " header is gated: the raw body in the DLQ');
  });

  it('version gate without a DLQ and without retry tiers (what the Python SDK does): committed, dropped and logged through onDrop', async () => {
    const topic = await lab.topic('gate-drop');
    await lab.produce(topic, [{ value: envelope('gated'), headers: { 'bq-schema-version': b('7') } }, { value: envelope('next') }]);
    const drops: DropEvent[] = [];
    const handled: string[] = [];
    const transport = lab.transport();
    const app = createApp({ transport, queue: topic, logger: silentLogger, onDrop: (e) => void drops.push(e) })
      .handle(URN, (_d, msg) => void handled.push(msg.id));
    await app.consume({ maxMessages: 2, idleMs: IDLE_MS });
    await app.close();
    assert.deepEqual(handled, ['next']);
    await until(() => drops.length === 1, 20_000, 'onDrop');
    assert.match(drops[0]!.why, /unsupported native schema version "7"/);
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 2 }, 'both offsets committed');
  });

  it('a null value stays null: on the version-gated DLQ record and on the poison retry copy', async () => {
    const gatedTopic = await lab.topic('null-gated');
    await lab.produce(gatedTopic, [{ value: null, key: b('k'), headers: { 'bq-schema-version': b('2'), traceparent: b('tp') } }]);
    const gated = createApp({ transport: lab.transport(), queue: gatedTopic, deadLetter: true, logger: silentLogger });
    try {
      assert.equal(await gated.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await gated.close();
    }
    const [raw] = await lab.read(`${gatedTopic}.dlq`, 1);
    assert.equal(raw!.value, null, 'the raw record of a null value is a null value, not an empty one');
    assert.deepEqual(raw!.key, b('k'));
    assert.equal(text(raw!.headers, 'traceparent'), 'tp');

    const poisonTopic = await lab.topic('null-poison');
    await lab.produce(poisonTopic, [{ value: null, key: null }]);
    const poison = createApp({ transport: lab.transport({ retryTiersMs: [60_000] }), queue: poisonTopic, maxAttempts: 3, logger: silentLogger });
    try {
      assert.equal(await poison.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await poison.close();
    }
    const [copy] = await lab.read(`${poisonTopic}.retry.1`, 1);
    assert.equal(copy!.value, null, 'the bounded retry carries the null value as null');
    assert.equal(text(copy!.headers, 'bq-attempts'), '1');
  });

  it('redrive keeps a version-gated record on the DLQ (reason version_gate): never sent to meta.queue past its gate', async () => {
    const topic = await lab.topic('gate-redrive');
    const dlq = `${topic}.dlq`;
    // A body a v1 handler would accept, naming the work topic as its meta.queue.
    const gated = b(JSON.stringify({ job: URN, trace_id: 't-g', data: {}, meta: { id: 'g', queue: topic, lang: 'go', schema_version: 1, created_at: 1 }, attempts: 0 }));
    await lab.produce(topic, [{ value: gated, key: b('k'), headers: { 'bq-schema-version': b('2'), traceparent: b(TP) } }]);
    const app = createApp({ transport: lab.transport(), queue: topic, deadLetter: true, logger: silentLogger })
      .handle(URN, () => assert.fail('a version-gated record must not reach a handler'));
    try {
      assert.equal(await app.consume({ maxMessages: 1, idleMs: IDLE_MS }), 1);
    } finally {
      await app.close();
    }
    const transport = lab.transport();
    const result = await redrive(transport, { from: dlq, max: 1, idleMs: IDLE_MS });
    await transport.close();
    assert.deepEqual(result.items.map((i) => [i.messageId, i.reason, i.redriven, i.to]), [['g', 'version_gate', false, '']]);
    const [, restored] = await lab.read(dlq, 2);
    assert.deepEqual(restored!.value, gated, 'restored byte for byte');
    assert.deepEqual(restored!.key, b('k'));
    const [work] = await (await lab.admin()).fetchTopicOffsets(topic);
    assert.equal(work!.high, '1', 'nothing was written back to the work topic');
  });

  it('redrive restores a null-valued DLQ record (a tombstone, undecodable) as null, never as an empty value, key kept', async () => {
    const topic = await lab.topic('null-redrive');
    const dlq = `${topic}.dlq`;
    await lab.createTopics([{ topic: dlq, numPartitions: 1 }]);
    await lab.produce(dlq, [{ value: null, key: b('k'), headers: { traceparent: b(TP) } }]);
    const transport = lab.transport();
    const result = await redrive(transport, { from: dlq, max: 1, idleMs: IDLE_MS });
    await transport.close();
    assert.deepEqual([result.redriven, result.skipped], [0, 1], 'undecodable: restored, skipped');
    const [, restored] = await lab.read(dlq, 2);
    assert.equal(restored!.value, null, 'the restore writes a null value, not an empty one');
    assert.deepEqual(restored!.key, b('k'));
    assert.equal(text(restored!.headers, 'traceparent'), TP);
  });

  it('reconciles attempts from bq-attempts when present (not a max), else from the body', async () => {
    const topic = await lab.topic('reconcile');
    await lab.produce(topic, [
      { value: envelope('lower-header', 5), headers: { 'bq-attempts': b('1') } },
      { value: envelope('higher-header', 1), headers: { 'bq-attempts': b('4') } },
      { value: envelope('no-header', 2) },
    ]);
    const seen: Record<string, number> = {};
    const app = createApp({ transport: lab.transport(), queue: topic, maxAttempts: 0, logger: silentLogger })
      .handle(URN, (_d, msg) => void (seen[msg.id] = msg.attempts));
    await app.consume({ maxMessages: 3, idleMs: IDLE_MS });
    await app.close();
    // The handler sees the counted attempt: reconciled + 1.
    assert.deepEqual(seen, { 'lower-header': 2, 'higher-header': 5, 'no-header': 3 });
  });

  it('dead-letters a failing record to <topic>.dlq with the dead_letter block, keeping null, empty and binary keys', async () => {
    const topic = await lab.topic('dlq');
    const keys = [null, Buffer.alloc(0), Buffer.from([0x00, 0xff, 0x01])];
    await lab.produce(topic, keys.map((key, i) => ({ value: envelope(`m${i}`, 0, { big: 12345678901234567890n.toString() }), key, headers: { traceparent: b(`tp${i}`) } })));
    // maxAttempts 1: the first failure is terminal (tiers configured, so the policy never needs to leave it unsettled).
    const app = createApp({ transport: lab.transport({ retryTiersMs: [500] }), queue: topic, maxAttempts: 1, deadLetter: true, logger: silentLogger })
      .handle(URN, () => {
        throw new TypeError('gateway timeout');
      });
    await app.consume({ maxMessages: 3, idleMs: IDLE_MS });
    await app.close();

    const dead = await lab.read(`${topic}.dlq`, 3);
    for (const [i, key] of keys.entries()) {
      const record = dead.find((r) => text(r.headers, 'traceparent') === `tp${i}`)!;
      assert.deepEqual(record.key, key, `key #${i} byte for byte`);
      // The delivered bytes with the counted attempt at the top level, then the block.
      const original = envelope(`m${i}`, 0, { big: '12345678901234567890' }).toString().replace('"attempts":0', '"attempts":1');
      const value = record.value!.toString();
      assert.ok(value.startsWith(`${original.slice(0, -1)},"dead_letter":{`), 'the original envelope, then the block');
      const parsed = JSON.parse(value) as Envelope & { dead_letter: Record<string, unknown> };
      assert.deepEqual(
        { ...parsed.dead_letter, failed_at: 0 },
        { reason: 'failed', error: 'gateway timeout', exception: 'TypeError', failed_at: 0, original_queue: topic, attempts: 1, lang: 'node' },
      );
    }
  });

  it('without tiers, a failure at the cap is still terminal: dead-lettered when on, else committed and dropped', async () => {
    for (const deadLetter of [true, false]) {
      const topic = await lab.topic(deadLetter ? 'cap-dlq' : 'cap-drop');
      await lab.produce(topic, [{ value: envelope('last-try', 2), headers: { 'bq-attempts': b('2') } }, { value: envelope('next') }]);
      const drops: DropEvent[] = [];
      const transport = lab.transport();
      const app = createApp({ transport, queue: topic, maxAttempts: 3, deadLetter, logger: silentLogger, onDrop: (e) => void drops.push(e) })
        .handle(URN, (_d, m) => {
          if (m.id === 'last-try') throw new Error('third and last failure');
        });
      assert.equal(await app.consume({ maxMessages: 2, idleMs: IDLE_MS }), 2, 'no redelivery: the third attempt was the last');
      await app.close();
      assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 2 });
      if (deadLetter) {
        const [dead] = await lab.read(`${topic}.dlq`, 1);
        assert.equal((JSON.parse(dead!.value!.toString()) as { dead_letter: { attempts: number } }).dead_letter.attempts, 3);
      } else {
        await until(() => drops.length === 1, 20_000, 'onDrop');
      }
    }
  });

  it('poison never blocks the partition: the good records behind it are processed', async () => {
    for (const deadLetter of [false, true]) {
      const topic = await lab.topic(deadLetter ? 'poison-dlq' : 'poison');
      await lab.produce(topic, [
        { value: b('{"no":"identity"}'), key: b('p') },
        { value: b('not json at all') },
        { value: envelope('good-1') },
        { value: envelope('good-2') },
      ]);
      const handled: string[] = [];
      const transport = lab.transport();
      const app = createApp({ transport, queue: topic, deadLetter, logger: silentLogger }).handle(URN, (_d, m) => void handled.push(m.id));
      await app.consume({ maxMessages: 4, idleMs: IDLE_MS });
      await app.close();
      assert.deepEqual(handled, ['good-1', 'good-2']);
      assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 4 });
      if (deadLetter) {
        const dead = await lab.read(`${topic}.dlq`, 2);
        const reasons = dead.map((r) => (JSON.parse(r.value!.toString()) as { dead_letter: { reason: string } }).dead_letter.reason);
        assert.deepEqual(reasons, ['poison', 'poison']);
        assert.equal(JSON.parse(dead[1]!.value!.toString()).raw, 'not json at all');
        assert.deepEqual(dead[0]!.key, b('p'));
      }
    }
  });

  it('without tiers a failing handler raises: the record is not committed, is delivered again, and later records wait', async () => {
    const topic = await lab.topic('no-tiers');
    await lab.produce(topic, [{ value: envelope('flaky') }, { value: envelope('after') }]);
    const order: string[] = [];
    let failures = 0;
    const transport = lab.transport({ redeliveryDelayMs: 100 });
    const app = createApp({ transport, queue: topic, logger: silentLogger }).handle(URN, (_d, msg) => {
      order.push(`${msg.id}@${msg.attempts}`);
      if (msg.id === 'flaky' && failures < 2) {
        failures += 1;
        throw new Error('not yet');
      }
    });
    await runUntil(app, () => order.includes('after@1'), 'the record after the flaky one');
    assert.deepEqual(order, ['flaky@1', 'flaky@1', 'flaky@1', 'after@1'], 'same record, same attempt count (no tier to count on), in order');
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 2 });
    assert.equal(await lab.exists(`${topic}.retry.1`), false, 'no retry topic without tiers');
  });

  it('a failed dead-letter write leaves the record uncommitted and it is delivered again', async () => {
    const topic = await lab.topic('dlq-fails');
    await lab.produce(topic, [{ value: envelope('doomed') }]);
    let deliveries = 0;
    const transport = lab.transport({ redeliveryDelayMs: 100, retryTiersMs: [500] });
    // An illegal topic name: the broker refuses the write, a fault no fake is needed for.
    const app = createApp({ transport, queue: topic, maxAttempts: 1, deadLetter: { queue: 'illegal topic name!' }, logger: silentLogger })
      .handle(URN, () => {
        deliveries += 1;
        throw new Error('boom');
      });
    await runUntil(app, () => deliveries >= 2, 'a redelivery');
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: -1 }, 'never committed');
  });

  it('runs partitions in parallel with concurrency > 1, each partition in order', async () => {
    const topic = await lab.topic('parallel', 2);
    const per = 5;
    await lab.produce(topic, [0, 1].flatMap((partition) =>
      Array.from({ length: per }, (_, i) => ({ value: envelope(`p${partition}-${i}`), partition }))));
    const seen: string[] = [];
    let active = 0;
    let maxActive = 0;
    const transport = lab.transport();
    const app = createApp({ transport, queue: topic, logger: silentLogger }).handle(URN, async (_d, msg) => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      // Hold until the other partition's record runs beside this one (bounded): the partitions'
      // fetches need not arrive together, so a fixed sleep would race them.
      await until(() => maxActive >= 2, 20_000).catch(() => undefined);
      seen.push(msg.id);
      active -= 1;
    });
    await app.consume({ maxMessages: 2 * per, concurrency: 2, idleMs: IDLE_MS });
    await app.close();
    assert.equal(maxActive, 2);
    for (const p of [0, 1]) {
      assert.deepEqual(seen.filter((id) => id.startsWith(`p${p}-`)), Array.from({ length: per }, (_, i) => `p${p}-${i}`));
    }
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: per, 1: per });
  });

  it('ordering key / none: records of one partition run in parallel; the same key never overlaps; commits reach the end', async () => {
    for (const ordering of ['key', 'none'] as const) {
      const topic = await lab.topic(`order-${ordering}`);
      const n = 12;
      await lab.produce(topic, Array.from({ length: n }, (_, i) => ({ value: envelope(`o${i}`), key: b(i % 3 === 0 ? 'same' : `k${i}`) })));
      let active = 0;
      let maxActive = 0;
      let sameActive = 0;
      let sameMax = 0;
      const sameOrder: string[] = [];
      const transport = lab.transport({ ordering });
      const app = createApp({ transport, queue: topic, logger: silentLogger }).handle(URN, async (_d, msg) => {
        const same = Number(msg.id.slice(1)) % 3 === 0;
        active += 1;
        maxActive = Math.max(maxActive, active);
        if (same) {
          sameActive += 1;
          sameMax = Math.max(sameMax, sameActive);
          sameOrder.push(msg.id);
        }
        // Hold until a second record runs beside this one (bounded), then a little longer so an overlap would show.
        await until(() => maxActive >= 2, 20_000).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 30));
        if (same) sameActive -= 1;
        active -= 1;
      });
      assert.equal(await app.consume({ maxMessages: n, concurrency: 4, idleMs: IDLE_MS }), n);
      await app.close();
      assert.ok(maxActive > 1, `${ordering}: in parallel within one partition (max ${maxActive})`);
      assert.ok(maxActive <= 4, `${ordering}: never more than the concurrency`);
      if (ordering === 'key') {
        assert.equal(sameMax, 1, 'one key: one at a time');
        assert.deepEqual(sameOrder, ['o0', 'o3', 'o6', 'o9'], 'one key: in offset order');
      }
      assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: n });
    }
  });

  it('with ordering none, the core drain (DLQ tools, redrive) takes every record of a partition at once', async () => {
    const topic = await lab.topic('drain');
    await lab.produce(topic, Array.from({ length: 5 }, (_, i) => ({ value: envelope(`d${i}`) })));
    const transport = lab.transport({ ordering: 'none' });
    // Stops at five; with per-partition ordering it would hold at one and end on the idle bound instead.
    const ids = await drainQueue(transport, topic, { max: 5, idleMs: IDLE_MS }, async (taken) => {
      for (const d of taken) await d.settle({ kind: 'ack' });
      return taken.map((d) => (JSON.parse(d.body.toString()) as Envelope).meta.id);
    });
    await transport.close();
    assert.deepEqual(ids, ['d0', 'd1', 'd2', 'd3', 'd4']);
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 5 });
  });
});
