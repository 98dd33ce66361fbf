/**
 * The brokers the scaling bench runs on: how to make a binding's transport
 * from the lab's URL, how to ready a queue before the preload and how to
 * remove it afterwards. Shared by the bench (bench/scale/index.ts) and its
 * worker processes (bench/scale/worker.ts).
 */
import { silentLogger, type Transport } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { KafkaTransport } from '@babelqueue/kafka';
import { SqsTransport } from '@babelqueue/sqs';
import { PulsarTransport } from '@babelqueue/pulsar';
import { ArtemisTransport } from '@babelqueue/artemis';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { Redis } from 'ioredis';
import { connect } from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import { DeleteQueueCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';

/** Partitions of a Kafka cell's topic: two per worker at the most workers measured, so none sits idle. */
export const KAFKA_PARTITIONS = 8;

export interface Broker {
  /** Name in --brokers and in the tables. */
  name: string;
  /** The URL variable (from the environment or .brokers/env). */
  env: string;
  /** The largest body the broker (or the binding's protocol) takes, bytes, and why. */
  maxBody?: { bytes: number; why: string };
  /** Messages per cell relative to the default (slow brokers get fewer, so the whole run stays short). */
  share: number;
  /** A transport for `queue`; `group` names the consumer group where the broker has one (Kafka). */
  transport(url: string, group: string): Transport;
  /** Readies `queue` before the preload (a Kafka topic with partitions, an SQS queue). */
  prepare?(url: string, queue: string): Promise<void>;
  /** Removes what the cell left (queues, topics, keys); best effort. */
  cleanup?(url: string, queue: string): Promise<void>;
}

const sqsClient = (url: string) => ({ endpoint: url, region: 'us-east-1', credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } });
const kafkaBrokers = (url: string) => url.replace(/^kafka:\/\//, '').split(/[/?]/)[0]!.split(',');

async function redisCleanup(url: string, queue: string): Promise<void> {
  const redis = new Redis(url);
  const keys = await redis.keys(`*${queue}*`);
  if (keys.length > 0) await redis.unlink(...keys);
  await redis.quit();
}

const redis = (layout: 'legacy' | 'zset'): Broker => ({
  name: `redis-${layout}`,
  env: 'BABELQUEUE_REDIS_URL',
  share: 1,
  transport: (url) => new RedisTransport({ url, layout, logger: silentLogger }),
  cleanup: redisCleanup,
});

export const BROKERS: Broker[] = [
  redis('legacy'),
  redis('zset'),
  {
    name: 'rabbitmq',
    env: 'BABELQUEUE_RABBITMQ_URL',
    share: 1,
    transport: (url) => new RabbitMqTransport({ url, logger: silentLogger }),
    async cleanup(url, queue) {
      const connection = await connect(url);
      // Only the work queue: a no-op handler dead-letters nothing, so no DLQ is declared.
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue);
      await connection.close();
    },
  },
  {
    name: 'kafka',
    env: 'BABELQUEUE_KAFKA_URL',
    share: 1,
    transport: (url, group) => new KafkaTransport({ url, groupId: group, logger: silentLogger }),
    async prepare(url, topic) {
      const admin = new Kafka({ brokers: kafkaBrokers(url), clientId: 'bq-bench-scale', logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: KAFKA_PARTITIONS, replicationFactor: 1 }], waitForLeaders: true });
      await admin.disconnect();
    },
    async cleanup(url, topic) {
      const admin = new Kafka({ brokers: kafkaBrokers(url), clientId: 'bq-bench-scale', logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      // The topic and what the binding made beside it (its `.dlq`).
      const topics = (await admin.listTopics()).filter((t) => t === topic || t.startsWith(`${topic}.`));
      await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.disconnect();
    },
  },
  {
    name: 'sqs',
    env: 'BABELQUEUE_SQS_URL',
    maxBody: { bytes: 256 * 1024, why: 'SQS takes at most 256 KiB' },
    // About 20 msgs/s at concurrency 1 on the lab's stand-in: a tenth of the messages keeps the run short.
    share: 0.1,
    transport: (url) => new SqsTransport({ ...sqsClient(url), createQueues: true, waitTimeSeconds: 1, logger: silentLogger }),
    async cleanup(url, queue) {
      const sqs = new SQSClient(sqsClient(url));
      const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: queue }));
      for (const QueueUrl of QueueUrls) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
      sqs.destroy();
    },
  },
  {
    name: 'pulsar',
    env: 'BABELQUEUE_PULSAR_URL',
    // The WebSocket API carries the body base64 in a JSON frame of at most 1 MiB (webSocketMaxTextFrameSize).
    maxBody: { bytes: 700 * 1024, why: "base64 in Pulsar's 1 MiB WebSocket frame" },
    share: 0.2,
    // The publisher creates the subscription, so the preload is kept for the workers.
    transport: (url) => new PulsarTransport({ url, logger: silentLogger }),
    async cleanup(url, topic) {
      await fetch(`${url}/admin/v2/persistent/public/default/${topic}?force=true`, { method: 'DELETE' }).catch(() => undefined);
    },
  },
  {
    name: 'artemis',
    env: 'BABELQUEUE_ARTEMIS_URL',
    share: 0.5,
    // An auto-created queue is deleted by Artemis once it is empty and has no consumer: nothing to clean.
    transport: (url) => new ArtemisTransport({ url: url.replace(/^amqp:/, 'artemis:'), logger: silentLogger }),
  },
  {
    name: 'asb',
    env: 'BABELQUEUE_ASB_URL',
    maxBody: { bytes: 256 * 1024, why: 'Service Bus (standard tier) takes at most 256 KiB' },
    share: 0.1,
    // The stand-in (test/support/asb-standin) keeps its queues in memory.
    transport: (url) => new AzureServiceBusTransport({ connectionString: url, logger: silentLogger }),
  },
];

/** The broker named `name`. */
export function brokerNamed(name: string): Broker {
  const broker = BROKERS.find((b) => b.name === name);
  if (broker === undefined) throw new Error(`unknown broker: ${name} (known: ${BROKERS.map((b) => b.name).join(', ')})`);
  return broker;
}
