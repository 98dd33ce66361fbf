import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger, type ScannedRecord, type Transport } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { ServiceBusClient } from '@azure/service-bus';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { configureQueue } from '../../azure-service-bus/test/support/lab.js';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';

const artemis = broker('artemis');
const rabbit = broker('rabbitmq');
const asb = broker('asb');

async function scanAll(transport: Transport, queue: string): Promise<ScannedRecord[]> {
  const out: ScannedRecord[] = [];
  for await (const record of transport.scan!(queue)) out.push(record);
  return out;
}

describe('console actions on Artemis remove exactly the chosen records', { skip: artemis.skip }, () => {
  it('deleting the record at the head of the DLQ keeps the one behind it; the page reads the DLQ after the action', async () => {
    const transport = new ArtemisTransport({ url: artemis.url!, logger: silentLogger });
    await transport.connect({ timeoutMs: 10_000 });
    const dlq = `${uniqueQueue('console-head')}.dlq`;
    const bodies = Array.from({ length: 5 }, (_, i) => foreignRecord({ urn: 'urn:babel:t:x', queue: 'orders', lang: 'php', dlLang: 'php', data: { i } }));
    for (const body of bodies) await transport.publishRaw(dlq, body);
    const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, idleMs: 1500, sampleEveryMs: 60_000 });
    try {
      const client = new ConsoleClient(running.url);
      await client.open();
      const rows = (await client.get('/api/records', { dlq })).body.records;
      assert.equal(rows.length, 5);
      const deleted = await client.post('/api/delete', { dlq, records: [{ index: rows[0].index, hash: rows[0].hash }] });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.equal(deleted.body.deleted, 1);
      const page = (await client.get('/api/records', { dlq })).body;
      assert.equal(page.depth, 4, `the page after the delete: ${JSON.stringify(page)}`);
      const left = (await scanAll(transport, dlq)).map((r) => r.body.toString()).sort();
      assert.deepEqual(left, bodies.slice(1).map((b) => b.toString()).sort(), 'exactly the chosen record left the DLQ');
    } finally {
      await running.close();
      await transport.purge(dlq).catch(() => undefined);
      await transport.close();
    }
  });
});

describe('console actions on a drain broker touch only the records up to the chosen ones', { skip: rabbit.skip }, () => {
  it('RabbitMQ: redriving 2 of 20 records writes back only the records ahead of them, not the whole DLQ', async () => {
    const transport = new RabbitMqTransport({ url: rabbit.url!, logger: silentLogger });
    await transport.connect({ timeoutMs: 10_000 });
    const queue = uniqueQueue('console-two');
    const dlq = `${queue}.dlq`;
    const bodies = Array.from({ length: 20 }, (_, i) => foreignRecord({ urn: 'urn:babel:t:x', queue, lang: 'php', dlLang: 'php', data: { i } }));
    for (const body of bodies) await transport.publishRaw(dlq, body);
    let rewrites = 0;
    const publishRaw = transport.publishRaw.bind(transport);
    transport.publishRaw = async (target: string, body: Buffer, headers?: Readonly<Record<string, string>>) => {
      if (target === dlq) rewrites += 1;
      return publishRaw(target, body, headers);
    };
    const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, sampleEveryMs: 60_000 });
    try {
      const client = new ConsoleClient(running.url);
      await client.open();
      const rows = (await client.get('/api/records', { dlq })).body.records;
      const chosen = [rows[1], rows[3]].map((r: any) => ({ index: r.index, hash: r.hash }));
      const result = await client.post('/api/redrive', { dlq, records: chosen });
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.deepEqual([result.body.redriven, result.body.not_found, result.body.method], [2, 0, 'drain']);
      assert.equal(rewrites, 2, 'only the two records taken ahead of the chosen ones were written back');
      assert.equal(await transport.depth(queue), 2);
      const left = (await scanAll(transport, dlq)).map((r) => r.body.toString());
      assert.deepEqual(left, [...bodies.slice(4), bodies[0]!, bodies[2]!].map((b) => b.toString()), 'the records behind the chosen ones kept their place');
    } finally {
      await running.close();
      for (const q of [queue, dlq]) await transport.purge(q).catch(() => undefined);
      await transport.close();
    }
  });
});

describe('console delete on the Service Bus stand-in finds a record shown on the page', { skip: asb.skip }, () => {
  it('with the default 1 s idle wait, the chosen record is deleted (the SDK hands over the first record late)', async () => {
    const client = new ServiceBusClient(asb.url!, { retryOptions: { timeoutInMs: 5_000, maxRetries: 3, retryDelayInMs: 200 } });
    const transport = new AzureServiceBusTransport({ client, receiveWaitMs: 200, logger: silentLogger });
    const queue = uniqueQueue('console-asb');
    const dlq = transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : `${queue}.dlq`;
    for (const entity of [queue, dlq]) await configureQueue(asb.url!, entity, { lockDurationMs: 2_000 });
    await transport.connect({ timeoutMs: 10_000 });
    const bodies = Array.from({ length: 3 }, (_, i) => foreignRecord({ urn: 'urn:babel:t:x', queue, lang: 'php', dlLang: 'php', data: { i } }));
    for (const body of bodies) await transport.publishRaw!(dlq, body);
    const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, sampleEveryMs: 60_000 });
    try {
      const page = new ConsoleClient(running.url);
      await page.open();
      const rows = (await page.get('/api/records', { dlq })).body.records;
      assert.equal(rows.length, 3);
      const deleted = await page.post('/api/delete', { dlq, records: [{ index: rows[1].index, hash: rows[1].hash }] });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.deepEqual([deleted.body.deleted, deleted.body.not_found], [1, 0], JSON.stringify(deleted.body));
    } finally {
      await running.close();
      await transport.purge?.(dlq).catch(() => undefined);
      await transport.close();
      await client.close();
    }
  });
});
