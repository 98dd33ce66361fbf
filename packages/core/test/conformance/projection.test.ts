import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EnvelopeCodec, type Envelope } from '@babelqueue/core';
import {
  projectArtemis,
  projectAsb,
  projectKafka,
  projectPulsar,
  projectRabbitMq,
  projectSqs,
} from '@babelqueue/core/binding';
import { suites, type Suite } from './suite.js';

function envelope(suite: Suite, file: string): Envelope {
  const env = EnvelopeCodec.decode(suite.fixture(file));
  assert.ok(EnvelopeCodec.accepts(env), "EnvelopeCodec.accepts(env)");
  return env;
}

for (const { suite, name, skip } of suites) {
  const m = suite?.manifest;
  describe(`conformance projections: ${name}`, { skip }, () => {
    test('rabbitmq property_projection', { skip: m?.rabbitmq === undefined }, () => {
      const block = m!.rabbitmq!.property_projection;
      const p = projectRabbitMq(envelope(suite!, block.envelope_file));
      // amqplib option names for the AMQP 0-9-1 properties the manifest names.
      assert.deepEqual(
        { type: p.type, correlation_id: p.correlationId, message_id: p.messageId, app_id: p.appId, content_type: p.contentType },
        block.properties,
      );
      assert.deepEqual(p.headers, block.headers);
      assert.equal(p.deliveryMode, 2);
    });

    test('sqs attribute_projection', { skip: m?.sqs === undefined }, () => {
      const block = m!.sqs!.attribute_projection;
      assert.deepEqual(projectSqs(envelope(suite!, block.envelope_file)), block.message_attributes);
    });

    test('asb property_projection', { skip: m?.asb === undefined }, () => {
      const block = m!.asb!.property_projection;
      const p = projectAsb(envelope(suite!, block.envelope_file));
      assert.deepEqual(
        { subject: p.subject, correlation_id: p.correlationId, message_id: p.messageId, content_type: p.contentType },
        block.message,
      );
      assert.deepEqual(p.applicationProperties, block.application_properties);
    });

    test('pulsar property_projection', { skip: m?.pulsar === undefined }, () => {
      const block = m!.pulsar!.property_projection;
      assert.deepEqual(projectPulsar(envelope(suite!, block.envelope_file)), block.properties);
    });

    test('kafka property_projection', { skip: m?.kafka === undefined }, () => {
      const block = m!.kafka!.property_projection;
      const env = envelope(suite!, block.envelope_file);
      const p = projectKafka(env);
      assert.deepEqual(p.headers, block.headers);
      assert.equal(p.timestamp, String(env.meta.created_at), 'record timestamp mirrors meta.created_at');
    });

    test('artemis property_projection', { skip: m?.artemis === undefined }, () => {
      const block = m!.artemis!.property_projection;
      const env = envelope(suite!, block.envelope_file);
      const p = projectArtemis(env);
      assert.deepEqual(p.message_annotations, { [block.jms_type_annotation]: block.jms_type });
      assert.equal(p.correlation_id, block.correlation_id);
      assert.equal(p.creation_time, env.meta.created_at, 'creation-time mirrors meta.created_at');
      assert.deepEqual(p.application_properties, block.properties);
    });
  });
}
