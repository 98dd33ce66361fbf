import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import amqp from 'amqplib';
import { silentLogger } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';

const rabbit = broker('rabbitmq');

/** Declares `name` with `args` straight over AMQP, as an operator would (the binding uses an existing queue as it is). */
async function declare(url: string, name: string, args: Record<string, unknown>): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    await channel.assertQueue(name, { durable: true, arguments: args });
    await channel.close();
  } finally {
    await connection.close();
  }
}

describe('console on a RabbitMQ quorum DLQ with a delivery limit', { skip: rabbit.skip }, () => {
  it('refuses to read it (every read would count a delivery), so repeated page loads lose no record; a classic DLQ with arguments of its own still reads', async () => {
    const transport = new RabbitMqTransport({ url: rabbit.url!, logger: silentLogger });
    await transport.connect({ timeoutMs: 10_000 });
    const quorum = `${uniqueQueue('console-qq')}.dlq`;
    const classic = `${uniqueQueue('console-ttl')}.dlq`;
    await declare(rabbit.url!, quorum, { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 });
    await declare(rabbit.url!, classic, { 'x-message-ttl': 600_000, 'x-max-length': 1000 });
    for (let i = 0; i < 10; i++) await transport.publishRaw(quorum, foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php', data: { i } }));
    for (let i = 0; i < 2; i++) await transport.publishRaw(classic, foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'go', dlLang: 'go', data: { i } }));
    const running = await startConsole({ transport, dlqs: [quorum, classic], port: 0, logger: silentLogger, sampleEveryMs: 60_000 });
    try {
      const client = new ConsoleClient(running.url);
      await client.open();
      // Six page loads, each a page of records and the charts: past the limit of 5 had every read counted.
      const answers: { status: number; body: any }[] = [];
      for (let load = 0; load < 6; load++) {
        answers.push(await client.get('/api/records', { dlq: quorum }), await client.get('/api/stats', { dlq: quorum }));
      }
      assert.equal(await transport.depth(quorum), 10, 'every record still on the quorum DLQ');
      for (const answer of answers) {
        assert.equal(answer.status, 409, JSON.stringify(answer.body));
        assert.match(answer.body.error, /refused to scan ".*": it is a quorum queue/);
        assert.match(answer.body.error, /x-delivery-count.*delivery limit/);
        assert.equal(answer.body.reads, 'refused');
      }
      const selected = await client.post('/api/delete', { dlq: quorum, records: [{ index: 0, hash: '0'.repeat(16) }] });
      assert.equal(selected.status, 409, 'finding chosen records reads too: refused');
      assert.equal(await transport.depth(quorum), 10);

      const other = await client.get('/api/records', { dlq: classic });
      assert.equal(other.status, 200, JSON.stringify(other.body));
      assert.deepEqual(other.body.records.map((r: any) => r.lang), ['go', 'go'], 'a classic queue with a TTL and a length limit is read as before');
    } finally {
      await running.close();
    }

    // With the explicit flag it reads, at the cost it names.
    const allowed = await startConsole({ transport, dlqs: [quorum], port: 0, logger: silentLogger, sampleEveryMs: 60_000, allowCountedReads: true });
    try {
      const client = new ConsoleClient(allowed.url);
      await client.open();
      const page = await client.get('/api/records', { dlq: quorum });
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.equal(page.body.records.length, 10);
    } finally {
      await allowed.close();
      for (const queue of [quorum, classic]) await transport.purge(queue).catch(() => undefined);
      await transport.close();
    }
  });
});
