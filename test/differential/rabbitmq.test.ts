// Differential conformance over RabbitMQ: durable queues on the default
// exchange, DLQ `<queue>.dlq`, the native schema version in the
// `x-schema-version` header.
import { connect } from 'amqplib';
import { silentLogger } from '@babelqueue/core';
import { RabbitMqTransport, SCHEMA_VERSION_HEADER } from '@babelqueue/rabbitmq';
import { broker } from '../support/brokers.js';
import { describeDifferential } from './support/driver.js';
import { inspectWith } from './support/inspect.js';

const transport = (url: string, _queue?: string) => new RabbitMqTransport({ url, logger: silentLogger });

describeDifferential({
  name: 'rabbitmq',
  broker: broker('rabbitmq'),
  transport,
  versionKey: SCHEMA_VERSION_HEADER,
  inspect: (url, queue, dlq) => inspectWith(transport(url), queue, dlq),
  async cleanup(url, queues) {
    const connection = await connect(url);
    const channel = await connection.createChannel();
    for (const q of queues) await channel.deleteQueue(q);
    await connection.close();
  },
});
