import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { MessageProperties } from 'amqplib';
import { amqpInteger, projectProperties } from '@babelqueue/rabbitmq';
import { copyProperties, plainHeaders, recordProperties } from '../src/projection.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../..');
const sharedManifest = resolve(repoRoot, '../shared/conformance/manifest.json');

// amqplib's own field-table encoder: what actually goes on the wire.
const codec = createRequire(import.meta.url)(join(repoRoot, 'node_modules/amqplib/lib/codec.js')) as {
  encodeTable(buffer: Buffer, value: unknown, offset: number): number;
};

/** The order-created fixture's projection (our own copy of the conformance values). */
const ORDER_CREATED = {
  urn: 'urn:babel:orders:created',
  traceId: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  messageId: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567',
  schemaVersion: 1,
  lang: 'php',
  createdAt: 1749132727000,
  attempts: 0,
};

/** Type tag of each header value as amqplib encodes it. */
function wireTags(headers: Record<string, unknown>): Record<string, string> {
  const buffer = Buffer.alloc(4096);
  const size = codec.encodeTable(buffer, headers, 0);
  const tags: Record<string, string> = {};
  let offset = 4;
  while (offset < size) {
    const keyLength = buffer.readUInt8(offset);
    const key = buffer.toString('utf8', offset + 1, offset + 1 + keyLength);
    offset += 1 + keyLength;
    const tag = String.fromCharCode(buffer[offset]!);
    tags[key] = tag;
    offset += 1;
    if (tag === 'I') offset += 4;
    else if (tag === 'l') offset += 8;
    else if (tag === 'S') offset += 4 + buffer.readUInt32BE(offset);
    else throw new Error(`unexpected tag ${tag}`);
  }
  return tags;
}

describe('RabbitMQ projection (FACTS §4, conformance rabbitmq block)', () => {
  it('projects the order-created fixture exactly', () => {
    const props = projectProperties(ORDER_CREATED);
    assert.equal(props.type, 'urn:babel:orders:created');
    assert.equal(props.correlationId, ORDER_CREATED.traceId);
    assert.equal(props.messageId, ORDER_CREATED.messageId);
    assert.equal(props.appId, 'babelqueue');
    assert.equal(props.contentType, 'application/json');
    assert.equal(props.contentEncoding, 'utf-8');
    assert.equal(props.deliveryMode, 2);
    assert.deepEqual(props.headers, {
      'x-schema-version': { '!': 'int', value: 1 },
      'x-source-lang': 'php',
      'x-attempts': { '!': 'int', value: 0 },
    });
  });

  it('matches the shared conformance manifest when it is present', { skip: !existsSync(sharedManifest) && 'no ../shared/conformance' }, () => {
    const manifest = JSON.parse(readFileSync(sharedManifest, 'utf8')) as {
      rabbitmq: { property_projection: { properties: Record<string, unknown>; headers: Record<string, unknown> } };
    };
    const expected = manifest.rabbitmq.property_projection;
    const props = projectProperties(ORDER_CREATED) as Record<string, unknown>;
    const wireName: Record<string, string> = {
      type: 'type',
      correlation_id: 'correlationId',
      message_id: 'messageId',
      app_id: 'appId',
      content_type: 'contentType',
    };
    for (const [slot, value] of Object.entries(expected.properties)) assert.equal(props[wireName[slot]!], value, slot);
    const headers = props.headers as Record<string, unknown>;
    const plain = Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k, typeof v === 'object' && v !== null ? (v as { value: unknown }).value : v]),
    );
    assert.deepEqual(plain, expected.headers);
  });

  it('puts the counters on the wire as AMQP integers and the language as a long string', () => {
    const tags = wireTags(projectProperties(ORDER_CREATED).headers as Record<string, unknown>);
    assert.deepEqual(tags, { 'x-schema-version': 'I', 'x-source-lang': 'S', 'x-attempts': 'I' });
    assert.deepEqual(amqpInteger(2 ** 40), { '!': 'long', value: 2 ** 40 });
  });

  it('merges riders, drops blank ones, and lets a contract header win', () => {
    const props = projectProperties(ORDER_CREATED, {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'x-attempts': '99',
      ' ': 'blank key',
      tracestate: '  ',
    });
    const headers = props.headers as Record<string, unknown>;
    assert.equal(headers.traceparent, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    assert.deepEqual(headers['x-attempts'], { '!': 'int', value: 0 });
    assert.equal(headers[' '], undefined);
    assert.equal(headers.tracestate, undefined);
  });

  it('refuses a projection value an AMQP short string cannot carry', () => {
    assert.throws(() => projectProperties({ ...ORDER_CREATED, traceId: 'x'.repeat(256) }), /correlation_id.*255 bytes/);
  });
});

describe('copies of a delivered message', () => {
  const original = {
    type: 'urn:babel:orders:created',
    correlationId: 't',
    messageId: 'm',
    appId: 'babelqueue',
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    deliveryMode: 1,
    userId: 'guest',
    expiration: '5000',
    headers: {
      'x-schema-version': 1,
      'x-source-lang': 'go',
      'x-attempts': 1,
      traceparent: 'tp',
      'x-death': [{ count: 1 }],
      'x-first-death-queue': 'orders.delay.100',
      'x-first-death-reason': 'expired',
      'x-first-death-exchange': '',
    },
  } as unknown as MessageProperties;

  it('keep the projection and riders, become persistent, and lose broker-added headers, user_id and expiration', () => {
    const copy = copyProperties(original, { 'x-attempts': amqpInteger(2) });
    assert.equal(copy.type, 'urn:babel:orders:created');
    assert.equal(copy.deliveryMode, 2);
    assert.equal(copy.userId, undefined);
    assert.equal(copy.expiration, undefined);
    assert.deepEqual(copy.headers, {
      'x-schema-version': { '!': 'int', value: 1 },
      'x-source-lang': 'go',
      'x-attempts': { '!': 'int', value: 2 },
      traceparent: 'tp',
    });
  });

  it('can remove headers (a version-gated record keeps neither x-attempts nor x-schema-version)', () => {
    const copy = copyProperties(original, { 'x-attempts': undefined, 'x-schema-version': undefined });
    assert.deepEqual(Object.keys(copy.headers as object).sort(), ['traceparent', 'x-source-lang']);
  });

  const record = (over: string) =>
    Buffer.from(`{"job":"urn:babel:orders:shipped","trace_id":"t2","data":{},"meta":{"id":"m2","queue":"orders","lang":"php","schema_version":1,"created_at":1},"attempts":3${over}}`);

  it('of a retry or dead-letter record project the record itself: its counted attempts, whatever the delivery said', () => {
    const copy = recordProperties({ ...original, priority: 4 } as MessageProperties, record(',"dead_letter":{"reason":"failed"}'));
    assert.deepEqual(
      { type: copy.type, correlationId: copy.correlationId, messageId: copy.messageId, appId: copy.appId, priority: copy.priority, deliveryMode: copy.deliveryMode },
      { type: 'urn:babel:orders:shipped', correlationId: 't2', messageId: 'm2', appId: 'babelqueue', priority: 4, deliveryMode: 2 },
    );
    assert.deepEqual(copy.headers, {
      'x-schema-version': { '!': 'int', value: 1 },
      'x-source-lang': 'php',
      'x-attempts': { '!': 'int', value: 3 },
      traceparent: 'tp',
    });
  });

  it('of a record that is not an envelope (a poison record) claim no envelope field; riders stay', () => {
    const copy = recordProperties(original, Buffer.from('{"raw":"nope","dead_letter":{"reason":"poison"}}'));
    assert.deepEqual([copy.type, copy.correlationId, copy.messageId], [undefined, undefined, undefined]);
    assert.deepEqual(copy.headers, { traceparent: 'tp' });
    assert.equal(copy.contentType, 'application/json');
  });

  it('of a record whose URN no short string can carry leave the slot out instead of failing the write', () => {
    const long = Buffer.from(record('').toString().replace('urn:babel:orders:shipped', `urn:${'x'.repeat(300)}`));
    const copy = recordProperties(original, long);
    assert.equal(copy.type, undefined);
    assert.equal(copy.correlationId, 't2');
  });
});

describe('delivered headers as the core sees them', () => {
  it('keeps scalars, reads byte strings as UTF-8 and leaves nested tables out', () => {
    assert.deepEqual(
      plainHeaders({
        s: 'a',
        n: 3,
        b: true,
        z: null,
        bytes: Buffer.from('tp'),
        big: BigInt(7),
        when: { '!': 'timestamp', value: 1700000000 },
        'x-death': [{ count: 1 }],
        table: { a: 1 },
      }),
      { s: 'a', n: 3, b: true, z: null, bytes: 'tp', big: 7, when: 1700000000 },
    );
  });
});
