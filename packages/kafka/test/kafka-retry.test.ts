import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { ConfigResourceTypes } from 'kafkajs';
import { createApp, silentLogger, type DropEvent } from '@babelqueue/core';
import { KafkaReinjector } from '../src/index.js';
import { Lab, kafka, runUntil, text, until, uniqueQueue } from './support/kafka-lab.js';

const b = (s: string) => Buffer.from(s, 'utf8');
const URN = 'urn:babel:orders:created';
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
/** kafkajs' ConfigResourceTypes.TOPIC (an enum, not a named ESM export of the CommonJS package). */
const TOPIC_RESOURCE = 2 as ConfigResourceTypes;

function envelope(id: string): Buffer {
  return b(`{"job":"${URN}","trace_id":"t-${id}","data":{"big":12345678901234567890},"meta":{"id":"${id}","queue":"orders","lang":"python","schema_version":1,"created_at":1749132727000},"attempts":0}`);
}

describe('Kafka retry tiers and the re-inject consumer (real broker)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('retries through two tiers and back to the work topic, each wait at least its tier', async () => {
    const topic = await lab.topic('tiers');
    const key = Buffer.from([0x00, 0x01, 0xfe, 0xff]);
    await lab.produce(topic, [{ value: envelope('m1'), key, headers: { traceparent: b(TP) } }]);
    const seen: { attempts: number; at: number }[] = [];
    const reinjectGroupId = uniqueQueue('ri');
    const transport = lab.transport({ retryTiersMs: [500, 1000], reinjectGroupId });
    const app = createApp({ transport, queue: topic, maxAttempts: 3, logger: silentLogger }).handle(URN, (_d, msg) => {
      seen.push({ attempts: msg.attempts, at: Date.now() });
      if (msg.attempts < 3) throw new Error(`failure ${msg.attempts}`);
    });
    await runUntil(app, () => seen.length === 3, 'three deliveries');

    assert.deepEqual(seen.map((s) => s.attempts), [1, 2, 3]);
    // Each retry waits at least its tier; how much longer depends on the machine's load,
    // so no upper bound (which tier a retry took is read from the tier topics below).
    const gap1 = seen[1]!.at - seen[0]!.at;
    const gap2 = seen[2]!.at - seen[1]!.at;
    assert.ok(gap1 >= 500, `tier 1 wait ${gap1} ms`);
    assert.ok(gap2 >= 1000, `tier 2 wait ${gap2} ms`);

    // The tier records: bq-attempts = attempts_before + 1, bq-delay, bq-original-topic, key and riders kept, body attempts edited in place.
    for (const [tier, delay] of [[1, 500], [2, 1000]] as const) {
      const [r] = await lab.read(`${topic}.retry.${tier}`, 1);
      assert.equal(text(r!.headers, 'bq-attempts'), String(tier));
      assert.equal(text(r!.headers, 'bq-delay'), String(delay));
      assert.equal(text(r!.headers, 'bq-original-topic'), topic);
      assert.equal(text(r!.headers, 'traceparent'), TP);
      assert.deepEqual(r!.key, key);
      assert.equal(r!.value!.toString(), envelope('m1').toString().replace('"attempts":0', `"attempts":${tier}`));
    }
    // Back on the work topic: value and key byte for byte, bq-delay and bq-original-topic dropped, every other header kept.
    const work = (await lab.read(topic, 3)).sort((x, y) => Number(x.offset) - Number(y.offset));
    for (const [i, r] of work.slice(1).entries()) {
      assert.deepEqual(r.key, key);
      assert.equal(text(r.headers, 'bq-attempts'), String(i + 1));
      assert.equal(text(r.headers, 'bq-delay'), undefined);
      assert.equal(text(r.headers, 'bq-original-topic'), undefined);
      assert.equal(text(r.headers, 'traceparent'), TP);
      assert.equal(r.value!.toString(), envelope('m1').toString().replace('"attempts":0', `"attempts":${i + 1}`));
    }
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 3 });
    assert.deepEqual(await lab.committed(reinjectGroupId, `${topic}.retry.1`), { 0: 1 });

    // The binding created the tier topics with LogAppendTime.
    const admin = await lab.admin();
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [1, 2].map((n) => ({ type: TOPIC_RESOURCE, name: `${topic}.retry.${n}`, configNames: ['message.timestamp.type'] })),
    });
    for (const resource of configs.resources) assert.equal(resource.configEntries[0]!.configValue, 'LogAppendTime', resource.resourceName);
  });

  it('poison with tiers and no DLQ takes the bounded tier retry, then is dropped; good records are not held up', async () => {
    const topic = await lab.topic('poison-tiers');
    const poison = Buffer.from([0x7b, 0xff, 0x22]);
    await lab.produce(topic, [{ value: poison, key: b('p') }, { value: envelope('good') }]);
    const events: string[] = [];
    const drops: DropEvent[] = [];
    const transport = lab.transport({ retryTiersMs: [500] });
    const app = createApp({
      transport,
      queue: topic,
      maxAttempts: 2,
      logger: silentLogger,
      onDrop: (e) => {
        drops.push(e);
        events.push('poison dropped');
      },
    }).handle(URN, (_d, msg) => void events.push(`handled ${msg.id}`));
    await runUntil(app, () => drops.length === 1, 'the poison drop');
    // Not a timing: the retry copy comes back behind the good record, so a partition
    // held for the poison's retries would show the drop first.
    assert.deepEqual(events, ['handled good', 'poison dropped'], 'the good record did not wait for the poison retry');
    assert.match(drops[0]!.why, /poison .*attempt 2 of 2/);
    const [retry] = await lab.read(`${topic}.retry.1`, 1);
    assert.deepEqual(retry!.value, poison, 'an undecodable body travels unchanged');
    assert.equal(text(retry!.headers, 'bq-attempts'), '1');
    assert.deepEqual(retry!.key, b('p'));
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 3 });
  });

  it('version-gated with tiers and no DLQ: the poison path (seed 000 §6.5), the gate kept on every copy, dropped at maxAttempts', async () => {
    const topic = await lab.topic('gate-tiers');
    const gated = envelope('gated');
    await lab.produce(topic, [{ value: gated, key: b('g'), headers: { 'bq-schema-version': b('2'), 'bq-attempts': b('0'), traceparent: b(TP) } }, { value: envelope('good') }]);
    const handled: string[] = [];
    const drops: DropEvent[] = [];
    const transport = lab.transport({ retryTiersMs: [500] });
    const app = createApp({ transport, queue: topic, maxAttempts: 2, logger: silentLogger, onDrop: (e) => void drops.push(e) })
      .handle(URN, (_d, msg) => void handled.push(msg.id));
    await runUntil(app, () => drops.length === 1, 'the version-gated drop');
    assert.deepEqual(handled, ['good'], 'the gated record never reached a handler, though its body decodes');
    assert.match(drops[0]!.why, /unsupported native schema version "2"; attempt 2 of 2/);
    // The tier copy: the value byte for byte (never decoded, attempts not edited), the gate header kept.
    const [copy] = await lab.read(`${topic}.retry.1`, 1);
    assert.deepEqual(copy!.value, gated);
    assert.deepEqual(copy!.key, b('g'));
    assert.equal(text(copy!.headers, 'bq-schema-version'), '2');
    assert.equal(text(copy!.headers, 'bq-attempts'), '1');
    assert.equal(text(copy!.headers, 'traceparent'), TP);
    // Back on the work topic with its gate: a newer consumer of the group could take it there.
    const work = (await lab.read(topic, 3)).sort((x, y) => Number(x.offset) - Number(y.offset));
    assert.deepEqual(work[2]!.value, gated);
    assert.equal(text(work[2]!.headers, 'bq-schema-version'), '2');
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: 3 });
  });

  it('a delayed publish goes to the smallest covering tier and arrives after that tier', async () => {
    const topic = await lab.topic('delayed');
    const seen: { attempts: number; at: number }[] = [];
    const transport = lab.transport({ retryTiersMs: [500, 1000] });
    const app = createApp({ transport, queue: topic, logger: silentLogger }).handle(URN, (_d, msg) => void seen.push({ attempts: msg.attempts, at: Date.now() }));
    const stop = new AbortController();
    const run = app.run({ signal: stop.signal });
    const published = Date.now();
    try {
      await app.publish(URN, { n: 1 }, { delayMs: 300, key: 'k' });
      await until(() => seen.length === 1, 30_000, 'the delayed message');
    } finally {
      stop.abort();
      await run;
    }
    // Not before tier 1 (the delay rounded up to it); no upper bound (load).
    const waited = seen[0]!.at - published;
    assert.ok(waited >= 500, `waited ${waited} ms for tier 1 (500 ms)`);
    assert.equal(seen[0]!.attempts, 1, 'a delay is not an attempt');
    const [r] = await lab.read(`${topic}.retry.1`, 1);
    assert.equal(text(r!.headers, 'bq-delay'), '500');
    assert.equal(text(r!.headers, 'bq-attempts'), '0');
  });

  it('retry and delay pick a tier by two rules: a failure the tier of its attempt, a release with a delay the tier covering it', async () => {
    const topic = await lab.topic('two-rules');
    const unknown = b(envelope('released').toString().replace(URN, 'urn:babel:nobody:home'));
    await lab.produce(topic, [{ value: unknown, key: b('r') }, { value: envelope('failed'), key: b('f') }]);
    // No re-inject: the copies stay on their tiers to be looked at.
    const transport = lab.transport({ retryTiersMs: [200, 60_000], reinject: false });
    const app = createApp({ transport, queue: topic, onUnknownUrn: 'release', unknownUrnReleaseDelayMs: 30_000, logger: silentLogger })
      .handle(URN, () => {
        throw new Error('fails');
      });
    try {
      assert.equal(await app.consume({ maxMessages: 2, idleMs: 30_000 }), 2);
    } finally {
      await app.close();
    }
    const [released] = await lab.read(`${topic}.retry.2`, 1);
    assert.deepEqual(released!.key, b('r'), 'the release (delay 30 s) took tier 2, the smallest covering 30 s, not tier 1 of its first attempt');
    assert.equal(text(released!.headers, 'bq-delay'), '60000');
    assert.equal(text(released!.headers, 'bq-attempts'), '1');
    const [failed] = await lab.read(`${topic}.retry.1`, 1);
    assert.deepEqual(failed!.key, b('f'), 'the failure took tier 1, the tier of its first attempt');
    assert.equal(text(failed!.headers, 'bq-delay'), '200');
    assert.equal(await lab.size(`${topic}.retry.1`), 1);
    assert.equal(await lab.size(`${topic}.retry.2`), 1);
  });

  it('a release delay above the largest tier is refused: nothing is written, the record stays uncommitted, the error is logged', async () => {
    const topic = await lab.topic('release-too-long');
    await lab.produce(topic, [{ value: b(envelope('released').toString().replace(URN, 'urn:babel:nobody:home')) }]);
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (fields: Record<string, unknown>, message: string) => void errors.push(`${message} ${String(fields.error)}`) };
    const transport = lab.transport({ retryTiersMs: [200, 1000], reinject: false, logger });
    const app = createApp({ transport, queue: topic, onUnknownUrn: 'release', unknownUrnReleaseDelayMs: 5000, logger });
    try {
      assert.equal(await app.consume({ maxMessages: 1, idleMs: 30_000 }), 1);
    } finally {
      await app.close();
    }
    assert.ok(errors.some((e) => /exceeds the largest retry tier \(1000 ms\)/.test(e)), errors.join('\n'));
    assert.deepEqual(await lab.committed(transport.groupId, topic), { 0: -1 }, 'not committed: delivered again');
    assert.equal(await lab.size(`${topic}.retry.1`) + await lab.size(`${topic}.retry.2`), 0);
  });

  it('the standalone re-injector pauses a record that is not due without holding up other tiers, and clamps a future timestamp', async () => {
    const topic = uniqueQueue('reinject');
    // CreateTime tier topics, so the test can set record timestamps itself.
    await lab.createTopics([1, 2].map((n) => ({ topic: `${topic}.retry.${n}` })));
    await lab.createTopics([{ topic }]);
    const now = Date.now();
    const headers = (delay: number) => ({ 'bq-delay': b(String(delay)), 'bq-original-topic': b(topic), 'bq-attempts': b('1'), 'x-rider': b('kept') });
    const produce = async (tier: number, value: string, timestamp: number, delay: number) => {
      const producer = lab.client.producer();
      await producer.connect();
      try {
        await producer.send({ topic: `${topic}.retry.${tier}`, messages: [{ value: b(value), key: null, headers: headers(delay), timestamp: String(timestamp) }] });
      } finally {
        await producer.disconnect();
      }
    };
    // Tier 2 is ten minutes: no start-up or round trip can make 'slow' due during the test.
    await produce(2, 'slow', now, 600_000);
    await produce(1, 'future', now + 3_600_000, 500); // a skewed clock: clamped to at most one tier
    const reinjector = new KafkaReinjector({ url: lab.url, topic, retryTiersMs: [500, 600_000], groupId: uniqueQueue('ri'), createTopics: false, logger: silentLogger });
    const stop = new AbortController();
    const running = reinjector.run({ signal: stop.signal });
    let records: Awaited<ReturnType<Lab['read']>>;
    try {
      // 'future' waits at most its 500 ms tier (an hour without the clamp), while 'slow' is held on tier 2.
      records = await lab.read(topic, 1, 30_000);
    } finally {
      stop.abort();
      await running;
      await reinjector.close();
    }
    assert.deepEqual(records.map((r) => r.value!.toString()), ['future'], 'the tier-2 wait did not block tier 1');
    assert.equal(await lab.size(topic), 1, "'slow' is still waiting on its tier");
    for (const r of records) {
      assert.equal(text(r.headers, 'x-rider'), 'kept');
      assert.equal(text(r.headers, 'bq-attempts'), '1');
      assert.equal(text(r.headers, 'bq-delay'), undefined);
      assert.equal(r.key, null);
    }
  });

  it('a re-inject write the broker refuses leaves the retry record uncommitted, and it is tried again', async () => {
    const topic = uniqueQueue('reinject-fail');
    await lab.createTopics([{ topic: `${topic}.retry.1` }]);
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (_f: Record<string, unknown>, message: string) => void errors.push(message) };
    await lab.produce(`${topic}.retry.1`, [{ value: b('{}'), headers: { 'bq-original-topic': b('illegal topic name!'), 'bq-delay': b('100') } }]);
    const groupId = uniqueQueue('ri-fail');
    const reinjector = new KafkaReinjector({ url: lab.url, topic, retryTiersMs: [100], groupId, createTopics: false, redeliveryDelayMs: 100, logger });
    const stop = new AbortController();
    const running = reinjector.run({ signal: stop.signal });
    const failures = () => errors.filter((m) => /re-inject write failed/.test(m)).length;
    try {
      await until(() => failures() >= 2, 30_000, 'two failed re-inject writes');
    } finally {
      stop.abort();
      await running;
      await reinjector.close();
    }
    assert.deepEqual(await lab.committed(groupId, `${topic}.retry.1`), { 0: -1 }, 'not committed');
  });
});
