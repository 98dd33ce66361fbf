import { silentLogger, transportFromUrl, type Transport } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { ServiceBusClient } from '@azure/service-bus';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { PulsarTransport } from '@babelqueue/pulsar';
import { SqsTransport } from '@babelqueue/sqs';
import { configureQueue } from '../../../azure-service-bus/test/support/lab.js';
import { RawPulsar } from '../../../pulsar/test/support/pulsar.js';
import { uniqueQueue, type BrokerName } from '../../../../test/support/brokers.js';

export interface Target {
  readonly name: string;
  readonly suite: BrokerName;
  /** The transport on the lab broker `base`; `id` names a Kafka consumer group (two transports with one id see the same DLQ). */
  readonly make: (base: string, id?: string) => Transport | Promise<Transport>;
  /** How the binding's scan reads (the session's `scan`): `peek`, or `leased` (SQS, RabbitMQ). */
  readonly scan: 'peek' | 'leased';
  /** How it removes one record: targeted (`remove`) or take-and-restore (`drain`). */
  readonly method: 'remove' | 'drain';
  /** Records come back in the order written (false: SQS standard queues keep no order). */
  readonly ordered: boolean;
  /** Makes the work queue and its DLQ ready where the broker needs it (Service Bus entities, Pulsar subscriptions). */
  readonly prepare?: (base: string, queue: string, dlq: string) => Promise<void>;
}

/** Each broker the console is tested on, with how its transport is made, reads and removes one record. */
export const BROKERS: readonly Target[] = [
  { name: 'Redis (legacy layout)', suite: 'redis', make: (base) => transportFromUrl(base), scan: 'peek', method: 'remove', ordered: true },
  { name: 'Redis (zset layout)', suite: 'redis', make: (base) => transportFromUrl(`${base}?layout=zset`), scan: 'peek', method: 'remove', ordered: true },
  { name: 'RabbitMQ', suite: 'rabbitmq', make: (base) => transportFromUrl(base), scan: 'leased', method: 'drain', ordered: true },
  // Drains hold what they take: a Kafka DLQ tool needs ordering=none (the CLI adds it).
  { name: 'Kafka', suite: 'kafka', make: (base, id = uniqueQueue('console')) => transportFromUrl(`${base}?groupId=${id}&ordering=none`), scan: 'peek', method: 'drain', ordered: true },
  {
    name: 'SQS',
    suite: 'sqs',
    // browseWorkQueues: the test reads the work queue to check what a redrive wrote there (SQS browses only DLQs by default).
    make: (base) => new SqsTransport({ endpoint: base, region: 'us-east-1', credentials: { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' }, waitTimeSeconds: 1, createQueues: true, browseWorkQueues: true, logger: silentLogger }),
    scan: 'leased',
    method: 'remove',
    ordered: false,
  },
  {
    name: 'Pulsar',
    suite: 'pulsar',
    make: (base) => new PulsarTransport({ url: base, negativeAckRedeliveryDelayMs: 100, logger: silentLogger }),
    scan: 'peek',
    method: 'drain',
    ordered: true,
    prepare: async (base, queue, dlq) => {
      const raw = new RawPulsar(base);
      for (const topic of [queue, dlq]) await raw.subscribe(topic);
    },
  },
  { name: 'Artemis', suite: 'artemis', make: (base) => new ArtemisTransport({ url: base, logger: silentLogger }), scan: 'peek', method: 'drain', ordered: true },
  {
    name: 'Service Bus (stand-in)',
    suite: 'asb',
    make: (base) => {
      // SDK operation time-outs of seconds, not 60 s tried four times: under a loaded full run the
      // delete's take-and-restore three times waited past the file's 5 minutes (cause not pinned down; the
      // SDK waits out its time-out for a settlement sent on a link that closes under it, as the
      // binding's reconnect test shows), and a retry then settles over the management link.
      const client = new ServiceBusClient(base, { retryOptions: { timeoutInMs: 5_000, maxRetries: 3, retryDelayInMs: 200 } });
      const transport = new AzureServiceBusTransport({ client, receiveWaitMs: 200, logger: silentLogger });
      const close = transport.close.bind(transport);
      // The transport leaves a client of the caller's open.
      transport.close = async () => {
        await close();
        await client.close();
      };
      return transport;
    },
    scan: 'peek',
    method: 'drain',
    ordered: true,
    prepare: async (base, queue, dlq) => {
      // A short lock: a message the SDK's receiver took past a drain's end stays locked until it lapses.
      for (const entity of [queue, dlq]) await configureQueue(base, entity, { lockDurationMs: 2_000 });
    },
  },
];
