// Trace interop with the Python SDK over real RabbitMQ: the traceparent rides
// the AMQP headers table both ways.
import { connect } from 'amqplib';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { silentLogger } from '@babelqueue/core';
import { broker } from '../support/brokers.js';
import { describeOtelInterop } from './support/otel-scenarios.js';

describeOtelInterop({
  name: 'rabbitmq',
  broker: broker('rabbitmq'),
  pythonCarriesHeaders: true,
  transport: (url) => new RabbitMqTransport({ url, logger: silentLogger }),
  async cleanup(url, queues) {
    const connection = await connect(url);
    const channel = await connection.createChannel();
    for (const q of queues) await channel.deleteQueue(q);
    await connection.close();
  },
});
