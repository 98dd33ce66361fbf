// Interop with the Python SDK (PikaTransport) over real RabbitMQ: durable
// queues on the default exchange, DLQ `<queue>.dlq`.
import assert from 'node:assert/strict';
import { connect } from 'amqplib';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { silentLogger } from '@babelqueue/core';
import { broker } from '../support/brokers.js';
import { describeInterop } from './support/scenarios.js';

describeInterop({
  name: 'rabbitmq',
  broker: broker('rabbitmq'),
  transport: (url) => new RabbitMqTransport({ url, logger: silentLogger }),
  async cleanup(url, queues) {
    const connection = await connect(url);
    const channel = await connection.createChannel();
    for (const q of queues) await channel.deleteQueue(q);
    await connection.close();
  },
  // The contract headers mirror the body on both sides (the Python SDK hands
  // header values over as strings).
  native: {
    fromPython(m) {
      assert.equal(m.headers['x-schema-version'], 1);
      assert.equal(m.headers['x-source-lang'], 'python');
      assert.equal(m.headers['x-attempts'], 0);
    },
    toPython(headers) {
      assert.equal(headers['x-schema-version'], '1');
      assert.equal(headers['x-source-lang'], 'node');
      assert.equal(headers['x-attempts'], '0');
    },
  },
});
