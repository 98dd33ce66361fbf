import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, type Envelope } from '@babelqueue/core';
import {
  envelopeProjection,
  nativeSchemaVersion,
  NO_PROJECTION,
  recordProjection,
  projectArtemis,
  projectAsb,
  projectKafka,
  projectPulsar,
  projectRabbitMq,
  projectSqs,
  SQS_MAX_ATTRIBUTES,
} from '@babelqueue/core/binding';

const env = EnvelopeCodec.make('urn:babel:orders:created', { order_id: 1 }, { queue: 'orders', traceId: 'trace-1' });
const projection = envelopeProjection(env);

describe('recordProjection: what a re-emitted record says', () => {
  const body = (tail: string) =>
    Buffer.from(`{"job":"urn:babel:orders:created","trace_id":"t","data":{},"meta":{"id":"m","queue":"orders","lang":"go","schema_version":1,"created_at":5}${tail}}`);
  const rows: [string, Buffer | null, unknown][] = [
    ['a retry copy: its fields, the edited attempts', body(',"attempts":2'), { urn: 'urn:babel:orders:created', traceId: 't', messageId: 'm', schemaVersion: 1, lang: 'go', createdAt: 5, attempts: 2 }],
    ['a failed record: the counted attempts beside the dead_letter block', body(',"attempts":3,"dead_letter":{"reason":"failed","attempts":3}'), { urn: 'urn:babel:orders:created', traceId: 't', messageId: 'm', schemaVersion: 1, lang: 'go', createdAt: 5, attempts: 3 }],
    ['a poison record wrapping a raw body', Buffer.from('{"raw":"x","dead_letter":{"reason":"poison"}}'), NO_PROJECTION],
    ['an identity-less object', Buffer.from('{"hello":1,"attempts":4}'), NO_PROJECTION],
    ['an envelope the consumer-side rules reject (attempts missing)', body(''), NO_PROJECTION],
    ['bytes that are not JSON', Buffer.from('not json'), NO_PROJECTION],
    ['invalid UTF-8', Buffer.from([0xff, 0xfe]), NO_PROJECTION],
    ['a null value (Kafka)', null, NO_PROJECTION],
  ];
  for (const [what, record, expected] of rows) {
    test(what, () => assert.deepEqual(recordProjection(record), expected));
  }

  test('no projection leaves every slot out, so only a binding\'s constants remain', () => {
    assert.deepEqual(projectKafka(NO_PROJECTION), { headers: {} });
    assert.deepEqual(projectPulsar(NO_PROJECTION), {});
    assert.deepEqual(projectRabbitMq(NO_PROJECTION), {
      appId: 'babelqueue', contentType: 'application/json', contentEncoding: 'utf-8', deliveryMode: 2, headers: {},
    });
  });
});

describe('projections', () => {
  test('envelopeProjection reads the routed URN (alias included) and the meta fields', () => {
    assert.deepEqual(projection, {
      urn: 'urn:babel:orders:created',
      traceId: 'trace-1',
      messageId: env.meta.id,
      schemaVersion: 1,
      lang: 'node',
      createdAt: env.meta.created_at,
      attempts: 0,
    });
    const alias = { ...env, job: undefined, urn: ' urn:a:b ' } as unknown as Envelope;
    assert.equal(envelopeProjection(alias).urn, 'urn:a:b');
  });

  test('a projection and the envelope it came from project the same', () => {
    assert.deepEqual(projectKafka(projection), projectKafka(env));
    assert.deepEqual(projectSqs(projection), projectSqs(env));
  });

  test('fields a foreign producer left out are left out of every projection', () => {
    const sparse = { job: 'urn:a:b', trace_id: 't', data: {}, meta: { schema_version: 1 }, attempts: 0 } as unknown as Envelope;
    assert.deepEqual(projectPulsar(sparse), { 'bq-job': 'urn:a:b', 'bq-trace-id': 't', 'bq-schema-version': '1', 'bq-attempts': '0' });
    assert.equal(projectKafka(sparse).timestamp, undefined);
    assert.equal(projectArtemis(sparse).creation_time, undefined);
    assert.equal(projectArtemis(sparse).message_id, undefined);
    assert.equal(projectRabbitMq(sparse).messageId, undefined);
    assert.equal(projectAsb(sparse).messageId, undefined);
    assert.deepEqual(Object.keys(projectSqs(sparse)), ['bq-job', 'bq-trace-id', 'bq-schema-version']);
    const empty = { job: 'urn:a:b', meta: 'x' } as unknown as Envelope;
    assert.deepEqual(projectRabbitMq(empty).headers, {});
    assert.deepEqual(projectPulsar({ job: 'urn:a:b' } as unknown as Envelope), { 'bq-job': 'urn:a:b' });
  });

  test('the binding constants', () => {
    const r = projectRabbitMq(env);
    assert.deepEqual([r.appId, r.contentType, r.contentEncoding, r.deliveryMode], ['babelqueue', 'application/json', 'utf-8', 2]);
    assert.equal(projectAsb(env).contentType, 'application/json');
    assert.equal(projectArtemis(env).content_type, 'application/json');
    assert.equal(projectArtemis(env).application_properties.bq_app_id, 'babelqueue');
    assert.equal(projectArtemis(env).message_id, env.meta.id, 'the client-set AMQP message-id is meta.id');
    assert.equal(projectArtemis(env).subject, env.job, 'subject = URN gives JMSType on a CORE JMS client');
    const props = projectArtemis(env).application_properties;
    assert.ok(!Object.values(props).includes(env.meta.id), 'meta.id is no bq_ property on Artemis');
  });

  test('riders join the native channel: blank keys and values dropped, a contract key wins', () => {
    const riders = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: ' ', ' ': 'x', 'bq-job': 'evil', 'x-attempts': '9', bq_app_id: 'evil', 'bq-delay': '5' };
    const tp = riders.traceparent;
    assert.equal(projectPulsar(env, riders).traceparent, tp);
    assert.equal(projectPulsar(env, riders)['bq-job'], 'urn:babel:orders:created');
    assert.equal(projectPulsar(env, riders)['bq-delay'], undefined, 'bq-delay is a contract key: riders cannot set it');
    assert.equal(projectPulsar(env, riders).tracestate, undefined);
    assert.equal(projectPulsar(env, riders)[' '], undefined);
    assert.equal(projectKafka(env, riders).headers.traceparent, tp);
    assert.equal(projectKafka(env, riders).headers['bq-job'], 'urn:babel:orders:created');
    assert.equal(projectRabbitMq(env, riders).headers.traceparent, tp);
    assert.equal(projectRabbitMq(env, riders).headers['x-attempts'], 0);
    assert.equal(projectAsb(env, riders).applicationProperties.traceparent, tp);
    assert.equal(projectArtemis(env, riders).application_properties.traceparent, tp);
    assert.equal(projectArtemis(env, riders).application_properties.bq_app_id, 'babelqueue');
    assert.deepEqual(projectSqs(env, riders).traceparent, { DataType: 'String', StringValue: tp });
  });

  test('SQS: riders in sorted key order until the table holds 10 attributes', () => {
    const riders = Object.fromEntries(['h', 'c', 'a', 'g', 'b', 'f', 'e', 'd'].map((k) => [k, `v-${k}`]));
    const attributes = projectSqs(env, riders);
    assert.equal(Object.keys(attributes).length, SQS_MAX_ATTRIBUTES);
    assert.deepEqual(Object.keys(attributes).slice(6), ['a', 'b', 'c', 'd']);
  });
});

describe('nativeSchemaVersion', () => {
  const rows: [unknown, string | undefined][] = [
    [undefined, undefined],
    [null, undefined],
    ['', undefined],
    ['  ', undefined],
    ['1', '1'],
    [' 1 ', ' 1 '],
    ['\u00a0', '\u00a0'],
    ['\t', undefined],
    ['2', '2'],
    ['1.0', '1.0'],
    [1, '1'],
    [1.0, '1'],
    [2, '2'],
    [1.5, '1.5'],
    [1n, '1'],
    [Buffer.from(' 1'), ' 1'],
    [Buffer.from(''), undefined],
    [true, 'true'],
  ];
  for (const [value, expected] of rows) {
    test(`${typeof value} ${String(value)} → ${expected}`, () => assert.equal(nativeSchemaVersion(value), expected));
  }
});
