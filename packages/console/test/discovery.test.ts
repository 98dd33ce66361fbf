import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dlqName, InMemoryTransport, silentLogger, transportFromUrl, type Transport } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { SqsTransport } from '@babelqueue/sqs';
import { RawPulsar } from '../../pulsar/test/support/pulsar.js';
import { broker, uniqueQueue, type BrokerName } from '../../../test/support/brokers.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';

interface Target {
  readonly name: string;
  readonly suite: BrokerName | 'memory';
  readonly make: (base: string) => Transport | Promise<Transport>;
  /** The binding lists its queues. */
  readonly lists: boolean;
  readonly prepare?: (base: string, dlq: string) => Promise<void>;
}

const TARGETS: readonly Target[] = [
  { name: 'in-memory', suite: 'memory', make: () => new InMemoryTransport(), lists: true },
  { name: 'Redis (legacy layout)', suite: 'redis', make: (base) => transportFromUrl(base), lists: true },
  { name: 'Redis (zset layout)', suite: 'redis', make: (base) => transportFromUrl(`${base}?layout=zset`), lists: true },
  { name: 'Kafka', suite: 'kafka', make: (base) => transportFromUrl(`${base}?groupId=${uniqueQueue('console')}&ordering=none`), lists: true },
  {
    name: 'SQS',
    suite: 'sqs',
    make: (base) => new SqsTransport({ endpoint: base, region: 'us-east-1', credentials: { accessKeyId: 'babelqueue', secretAccessKey: 'babelqueue' }, waitTimeSeconds: 1, createQueues: true, logger: silentLogger }),
    lists: true,
  },
  {
    name: 'Pulsar',
    suite: 'pulsar',
    make: (base) => new PulsarTransport({ url: base, logger: silentLogger }),
    lists: true,
    prepare: async (base, dlq) => new RawPulsar(base).subscribe(dlq),
  },
  // AMQP 0-9-1 cannot list queues (and the lab runs no management plugin): the page says so.
  { name: 'RabbitMQ', suite: 'rabbitmq', make: (base) => transportFromUrl(base), lists: false },
];

for (const target of TARGETS) {
  const suite = target.suite === 'memory' ? { url: 'memory://', skip: false as const } : broker(target.suite);
  describe(`DLQ discovery on ${target.name}`, { skip: suite.skip }, () => {
    it(target.lists ? 'the overview counts a DLQ that was not named at start, and it can be opened' : 'the overview says the broker cannot list its queues', async () => {
      const transport = await target.make(suite.url!);
      await transport.connect({ timeoutMs: 10_000 });
      // Sorts first: the overview lists the first 500 DLQs by name, and a shared lab's Kafka holds more.
      const queue = uniqueQueue('0-discover');
      const dlq = transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : dlqName(queue);
      const named = transport.rules.dlqName ? transport.rules.dlqName(uniqueQueue('named'), undefined) : dlqName(uniqueQueue('named'));
      await target.prepare?.(suite.url!, dlq);
      for (let i = 0; i < 2; i++) await transport.publishRaw!(dlq, foreignRecord({ urn: 'urn:babel:orders:created', queue, lang: 'php', dlLang: 'node' }));
      await transport.publishRaw!(queue, Buffer.from('{"not":"a dlq"}')).catch(() => undefined);
      const running = await startConsole({ transport, dlqs: [named], port: 0, logger: silentLogger, journalDir: mkdtempSync(join(tmpdir(), 'bq-console-journal-')) });
      try {
        const client = new ConsoleClient(running.url);
        await client.open();
        const overview = await client.get('/api/overview');
        assert.equal(overview.status, 200, JSON.stringify(overview.body));
        assert.equal(overview.body.discovery.supported, target.lists);
        const names = overview.body.dlqs.map((d: any) => d.name);
        assert.ok(names.includes(named), 'the named DLQ is listed');
        if (!target.lists) {
          assert.match(overview.body.discovery.note, /cannot list the broker's queues/);
          assert.ok(!names.includes(dlq), 'nothing discovered');
          assert.equal((await client.get('/api/records', { dlq })).status, 404, 'an undiscovered DLQ is not served');
          return;
        }
        const found = overview.body.dlqs.find((d: any) => d.name === dlq);
        assert.deepEqual(found, { name: dlq, configured: false, depth: 2 }, JSON.stringify(overview.body));
        assert.ok(!names.includes(queue), 'a work queue is not a DLQ');
        assert.ok(overview.body.total >= 2, 'the total counts it');
        const page = await client.get('/api/records', { dlq });
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.equal(page.body.records.length, 2, 'a discovered DLQ opens like a named one');
      } finally {
        await running.close();
        for (const q of [queue, dlq]) await transport.purge?.(q).catch(() => undefined);
        await transport.close();
      }
    });
  });
}
