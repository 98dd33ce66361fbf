// Issue #31 item 7: the Python producer of each broker (examples/python/<broker>/producer.py,
// shown as it is in the binding's README) is run with the official Python SDK against the lab
// broker, and a BabelQueue App consumes what it sent: the examples cannot drift from the SDK's
// constructor and URL forms, nor from what our workers read.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CreateQueueCommand, DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createApp, silentLogger, type Transport } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { KafkaTransport } from '@babelqueue/kafka';
import { PulsarTransport } from '@babelqueue/pulsar';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { RedisTransport } from '@babelqueue/redis';
import { parseSqsUrl, SqsTransport } from '@babelqueue/sqs';
import { broker, uniqueQueue, type BrokerName } from '../support/brokers.js';
import { venvPython } from '../interop/support/python-peer.js';

// Both SDKs take AWS credentials from the standard chain; any static key works on the lab server.
process.env.AWS_ACCESS_KEY_ID ??= 'babelqueue';
process.env.AWS_SECRET_ACCESS_KEY ??= 'babelqueue';

const root = fileURLToPath(new URL('../../', import.meta.url));
const python = venvPython();
const URN = 'urn:babel:orders:created';
const SENT = [1001, 1002, 1003].map((order_id) => ({ order_id, total_cents: 4200 }));

interface Example {
  /** examples/python/<dir>/producer.py and packages/<dir>/README.md. */
  readonly dir: string;
  readonly lab: BrokerName;
  /** The environment the example reads, from the lab's URL. */
  env(url: string): Record<string, string>;
  /** Our transport for the worker. */
  transport(url: string, queue: string): Transport;
  /** Before the producer runs (queues the Python SDK does not create, or creates otherwise). */
  prepare?(url: string, queue: string): Promise<void>;
  cleanup?(url: string, queue: string): Promise<void>;
}

const sqsUrl = (url: string) => `sqs://us-east-1?endpoint=${url}`;
const sqsClient = (url: string) => {
  const { region, endpoint } = parseSqsUrl(sqsUrl(url));
  return new SQSClient({ region: region!, endpoint: endpoint! });
};
const artemisUrl = (url: string) => url.replace(/^amqp:/, 'artemis:');

const EXAMPLES: Example[] = [
  {
    dir: 'redis',
    lab: 'redis',
    env: (url) => ({ REDIS_URL: url }),
    transport: (url) => new RedisTransport({ url, logger: silentLogger }),
    async cleanup(url, queue) {
      const t = new RedisTransport({ url, logger: silentLogger });
      await t.purge!(queue).catch(() => 0);
      await t.close();
    },
  },
  {
    dir: 'rabbitmq',
    lab: 'rabbitmq',
    env: (url) => ({ AMQP_URL: url }),
    transport: (url) => new RabbitMqTransport({ url, logger: silentLogger }),
  },
  {
    dir: 'kafka',
    lab: 'kafka',
    env: (url) => ({ KAFKA_URL: url }),
    transport: (url, queue) => new KafkaTransport({ url, groupId: `${queue}.workers`, logger: silentLogger }),
  },
  {
    dir: 'sqs',
    lab: 'sqs',
    env: (url) => ({ SQS_URL: sqsUrl(url) }),
    transport: (url) => new SqsTransport({ ...parseSqsUrl(sqsUrl(url)), waitTimeSeconds: 1, logger: silentLogger }),
    async prepare(url, queue) {
      const sqs = sqsClient(url);
      await sqs.send(new CreateQueueCommand({ QueueName: queue }));
      sqs.destroy();
    },
    async cleanup(url, queue) {
      const sqs = sqsClient(url);
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: queue }));
      await sqs.send(new DeleteQueueCommand({ QueueUrl }));
      sqs.destroy();
    },
  },
  {
    dir: 'azure-service-bus',
    lab: 'asb',
    env: (url) => ({ AZURE_SERVICEBUS_CONNECTION_STRING: url }),
    transport: (url) => new AzureServiceBusTransport({ connectionString: url, logger: silentLogger }),
  },
  {
    dir: 'pulsar',
    lab: 'pulsar',
    // The Python SDK speaks Pulsar's binary protocol; our binding the WebSocket API of the same broker.
    env: (url) => ({ PULSAR_URL: `pulsar://${new URL(url).hostname}:6650` }),
    transport: (url) => new PulsarTransport({ url, logger: silentLogger }),
  },
  {
    dir: 'artemis',
    lab: 'artemis',
    env: (url) => ({ ARTEMIS_URL: artemisUrl(url) }),
    transport: (url) => new ArtemisTransport({ url: artemisUrl(url), logger: silentLogger }),
    // The worker first, as the example says: its link makes the anycast queue.
    async prepare(url, queue) {
      const t = new ArtemisTransport({ url: artemisUrl(url), logger: silentLogger });
      await t.purge(queue);
      await t.close();
    },
  },
];

function runProducer(file: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(python, [file], { env: { ...process.env, ...env }, timeout: 120_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${file} failed: ${error.message}\n${stderr}`));
      else resolve();
    });
  });
}

describe('the Python producer examples: each README shows the file that runs', () => {
  for (const example of EXAMPLES) {
    it(`packages/${example.dir}/README.md shows examples/python/${example.dir}/producer.py as it is`, () => {
      const code = readFileSync(`${root}examples/python/${example.dir}/producer.py`, 'utf8');
      const readme = readFileSync(`${root}packages/${example.dir}/README.md`, 'utf8');
      assert.ok(readme.includes(`\`\`\`python\n${code}\`\`\``), `the README's python block differs from examples/python/${example.dir}/producer.py`);
      assert.ok(code.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')).length <= 10, 'ten lines of code at most');
    });
  }
});

for (const example of EXAMPLES) {
  const lab = broker(example.lab);
  const noPython = existsSync(python) ? false : `SKIPPED (no Python SDK): ${python} does not exist; create it with \`scripts/peers\``;
  if (noPython && process.env.CI === 'true') throw new Error(`python producer examples cannot run under CI=true: ${noPython}`);
  describe(`examples/python/${example.dir}/producer.py against the lab broker`, { skip: lab.skip || noPython }, () => {
    const queue = uniqueQueue(`example-py-${example.dir}`);
    after(async () => {
      await example.cleanup?.(lab.url!, queue);
    });

    it('publishes three orders with the official Python SDK that a BabelQueue worker handles', async () => {
      const url = lab.url!;
      await example.prepare?.(url, queue);
      await runProducer(`${root}examples/python/${example.dir}/producer.py`, { ...example.env(url), QUEUE: queue });
      const app = createApp({ transport: example.transport(url, queue), queue, logger: silentLogger });
      const got: { data: unknown; lang: string }[] = [];
      app.handle(URN, (data, message) => {
        got.push({ data, lang: message.envelope.meta.lang });
      });
      try {
        await app.consume({ maxMessages: SENT.length, idleMs: 15_000 });
      } finally {
        await app.close();
      }
      assert.deepEqual(got.map((g) => g.data).sort((a, b) => (a as { order_id: number }).order_id - (b as { order_id: number }).order_id), SENT);
      assert.deepEqual(new Set(got.map((g) => g.lang)), new Set(['python']));
    });
  });
}
