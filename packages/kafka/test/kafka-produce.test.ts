import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp, silentLogger, type Envelope } from '@babelqueue/core';
import { envelopeProjection } from '@babelqueue/core/binding';
import { Lab, kafka, text } from './support/kafka-lab.js';

// Our own copy of the conformance suite's order-created envelope (the manifest's projection is built from it).
const ORDER_CREATED: Envelope = {
  job: 'urn:babel:orders:created',
  trace_id: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  data: { order_id: 1042 },
  meta: { id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', queue: 'orders', lang: 'php', schema_version: 1, created_at: 1749132727000 },
  attempts: 0,
} as Envelope;

const EXPECTED_HEADERS = {
  'bq-job': 'urn:babel:orders:created',
  'bq-trace-id': '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  'bq-message-id': 'f1e2d3c4-b5a6-4789-90ab-cdef01234567',
  'bq-schema-version': '1',
  'bq-source-lang': 'php',
  'bq-attempts': '0',
};

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const manifestPath = join(process.cwd(), '..', 'shared', 'conformance', 'manifest.json');

describe('Kafka produce (real broker)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('projects the bq- headers as UTF-8 strings, keeps the value bytes and stamps meta.created_at as the record timestamp', async () => {
    const topic = await lab.topic('produce');
    const transport = lab.transport();
    const body = Buffer.from(JSON.stringify(ORDER_CREATED), 'utf8');
    await transport.publish({
      body,
      queue: topic,
      projection: envelopeProjection(ORDER_CREATED),
      headers: { traceparent: TRACEPARENT, 'bq-job': 'a rider never overrides the contract' },
      key: Buffer.from('order-1042'),
    });
    await transport.close();

    const [record] = await lab.read(topic, 1);
    assert.deepEqual(record!.value, body, 'the record value is the envelope, byte for byte');
    const headers: Record<string, string | null | undefined> = Object.fromEntries(Object.keys(record!.headers ?? {}).map((k) => [k, text(record!.headers, k)]));
    assert.deepEqual(headers, { ...EXPECTED_HEADERS, traceparent: TRACEPARENT });
    for (const value of Object.values(record!.headers ?? {})) assert.ok(Buffer.isBuffer(value), 'header values are bytes');
    assert.equal(record!.timestamp, '1749132727000');
    assert.deepEqual(record!.key, Buffer.from('order-1042'));

    if (existsSync(manifestPath)) {
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { kafka: { property_projection: { headers: Record<string, string> } } };
      for (const [name, value] of Object.entries(manifest.kafka.property_projection.headers)) {
        assert.equal(text(record!.headers, name), value, `conformance manifest header ${name}`);
      }
    }
  });

  it('publishes through the App with the key byte for byte: none, null, empty, text and binary', async () => {
    const topic = await lab.topic('keys');
    const app = createApp({ transport: lab.transport(), queue: topic, logger: silentLogger });
    const keys: (Buffer | string | null | undefined)[] = [undefined, null, Buffer.alloc(0), 'k-1', Buffer.from([0x00, 0xff, 0xfe, 0x80])];
    const ids: string[] = [];
    for (const key of keys) ids.push(await app.publish('urn:babel:orders:created', { n: ids.length }, { key }));
    await app.close();

    const records = await lab.read(topic, keys.length);
    const byId = new Map(records.map((r) => [text(r.headers, 'bq-message-id'), r]));
    const expected = [null, null, Buffer.alloc(0), Buffer.from('k-1'), Buffer.from([0x00, 0xff, 0xfe, 0x80])];
    ids.forEach((id, i) => assert.deepEqual(byId.get(id)!.key, expected[i], `key #${i}`));
    const body = JSON.parse(records[0]!.value!.toString()) as Envelope;
    assert.equal(body.meta.queue, topic);
    assert.equal(records[0]!.timestamp, String(body.meta.created_at));
  });

  it('refuses a delayed publish without retry tiers, and a delay above the largest tier', async () => {
    const topic = await lab.topic('nodelay');
    const plain = createApp({ transport: lab.transport(), queue: topic, logger: silentLogger });
    await assert.rejects(plain.publish('urn:x', {}, { delayMs: 10 }), (e: Error) => e.name === 'CapabilityError');
    const tiered = createApp({ transport: lab.transport({ retryTiersMs: [500, 1000] }), queue: topic, logger: silentLogger });
    await assert.rejects(tiered.publish('urn:x', {}, { delayMs: 1001 }), /exceeds the largest retry tier/);
    await Promise.all([plain.close(), tiered.close()]);
    assert.equal(await lab.size(topic), 0, 'nothing was written');
  });

  it('publishRaw writes the bytes, headers and key as given (tools, redrive restores)', async () => {
    const topic = await lab.topic('raw');
    const transport = lab.transport();
    const body = Buffer.from([0x7b, 0xff, 0x7d]);
    await transport.publishRaw(topic, body, { 'x-rider': 'r' }, { key: Buffer.alloc(0) });
    await transport.publishRaw(topic, body);
    await transport.close();
    const records = (await lab.read(topic, 2)).sort((x, y) => Number(x.offset) - Number(y.offset));
    assert.deepEqual(records.map((r) => r.value), [body, body]);
    assert.deepEqual(records.map((r) => r.key), [Buffer.alloc(0), null]);
    assert.equal(text(records[0]!.headers, 'x-rider'), 'r');
    assert.deepEqual(Object.keys(records[1]!.headers ?? {}), []);
  });
});
