// Smoke: the App end to end on every lab broker, through each binding: a message
// handled, a failing one dead-lettered with its `dead_letter` block and read back
// from the DLQ by a second App. Small on purpose: .ci/run runs it on every
// supported Node.js line (scripts/node), beside the raw-client smoke files.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ArtemisTransport } from '@babelqueue/artemis';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { createApp, dlqName, silentLogger, type Message, type Transport } from '@babelqueue/core';
import { sqsDlqName } from '@babelqueue/core/binding';
import { KafkaTransport } from '@babelqueue/kafka';
import { PulsarTransport } from '@babelqueue/pulsar';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { RedisTransport } from '@babelqueue/redis';
import { SqsTransport } from '@babelqueue/sqs';
import { broker, uniqueQueue, type BrokerName } from '../support/brokers.js';
import { until } from '../support/until.js';

const OK = 'urn:babel:smoke:ok';
const FAIL = 'urn:babel:smoke:fail';
const SQS_KEY = { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' };

interface Row {
  readonly name: string;
  readonly broker: BrokerName;
  /** A transport on the lab broker; `queue` is the work queue of this row. */
  readonly transport: (url: string, queue: string) => Transport;
  readonly dlq?: (queue: string) => string;
  /** Creates the queues where the binding does not (SQS). */
  readonly prepare?: (url: string, queues: string[]) => Promise<() => Promise<void>>;
}

const ROWS: Row[] = [
  { name: 'redis (legacy layout)', broker: 'redis', transport: (url) => new RedisTransport({ url, logger: silentLogger }) },
  { name: 'redis (zset layout)', broker: 'redis', transport: (url) => new RedisTransport({ url, layout: 'zset', logger: silentLogger }) },
  { name: 'rabbitmq', broker: 'rabbitmq', transport: (url) => new RabbitMqTransport({ url, logger: silentLogger }) },
  { name: 'kafka', broker: 'kafka', transport: (url, queue) => new KafkaTransport({ url, groupId: `${queue}.workers`, logger: silentLogger }) },
  {
    name: 'sqs',
    broker: 'sqs',
    transport: (endpoint) => new SqsTransport({ endpoint, region: 'us-east-1', credentials: SQS_KEY, waitTimeSeconds: 1, logger: silentLogger }),
    dlq: sqsDlqName,
    async prepare(endpoint, queues) {
      const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: SQS_KEY });
      for (const QueueName of queues) await sqs.send(new CreateQueueCommand({ QueueName }));
      return async () => {
        for (const QueueName of queues) {
          const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName })).catch(() => ({ QueueUrl: undefined }));
          if (QueueUrl !== undefined) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
        }
        sqs.destroy();
      };
    },
  },
  { name: 'pulsar', broker: 'pulsar', transport: (url) => new PulsarTransport({ url, logger: silentLogger }) },
  { name: 'artemis', broker: 'artemis', transport: (url) => new ArtemisTransport({ url, logger: silentLogger }) },
  { name: 'asb (stand-in)', broker: 'asb', transport: (connectionString) => new AzureServiceBusTransport({ connectionString, logger: silentLogger }) },
];

for (const row of ROWS) {
  const lab = broker(row.broker);
  describe(`smoke: the App on ${row.name}`, { skip: lab.skip }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    });

    it('handles a message and dead-letters a failing one, which a second App reads back from the DLQ', async () => {
      const queue = uniqueQueue('smoke-app');
      const dlq = (row.dlq ?? dlqName)(queue);
      if (row.prepare) cleanups.push(await row.prepare(lab.url!, [queue, dlq]));

      const transport = row.transport(lab.url!, queue);
      const app = createApp({ transport, queue, logger: silentLogger, maxAttempts: 1, deadLetter: true });
      cleanups.push(() => app.close());
      const handled: Message[] = [];
      app.handle(OK, (_data, message) => {
        handled.push(message);
      });
      app.handle(FAIL, () => {
        throw new Error('smoke failure on purpose');
      });
      await app.publish(OK, { n: 1 }, { traceId: 'smoke-trace-ok' });
      await app.publish(FAIL, { n: 2 }, { traceId: 'smoke-trace-fail' });
      await app.consume({ maxMessages: 2, idleMs: 30_000 });
      assert.deepEqual(handled.map((m) => [m.urn, m.traceId, m.attempts]), [[OK, 'smoke-trace-ok', 1]]);

      const reader = createApp({ transport: row.transport(lab.url!, dlq), queue: dlq, logger: silentLogger, maxAttempts: 1 });
      cleanups.push(() => reader.close());
      const records: Message[] = [];
      reader.handle(FAIL, (_data, message) => {
        records.push(message);
      });
      await until(async () => {
        await reader.consume({ maxMessages: 1, idleMs: 5_000 });
        return records.length > 0;
      }, 60_000, `the dead-letter record on ${dlq}`);
      const record = records[0]!;
      assert.equal(record.traceId, 'smoke-trace-fail');
      const block = (JSON.parse(record.body.toString('utf8')) as { dead_letter?: { reason?: string; attempts?: number } }).dead_letter;
      assert.equal(block?.reason, 'failed');
      assert.equal(block?.attempts, 1);
    });
  });
}
