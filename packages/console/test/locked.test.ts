import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { ServiceBusClient } from '@azure/service-bus';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { configureQueue } from '../../azure-service-bus/test/support/lab.js';
import { broker, uniqueQueue } from '../../../test/support/brokers.js';
import { startConsole } from '../src/index.js';
import { ConsoleClient } from './support/client.js';
import { foreignRecord } from './support/records.js';

const asb = broker('asb');

describe('a record another receiver holds locked', { skip: asb.skip }, () => {
  it('Service Bus: deleting or redriving a peek-locked record answers 423 "locked, try again in N s", not "not found"', async () => {
    const client = new ServiceBusClient(asb.url!, { retryOptions: { timeoutInMs: 5_000, maxRetries: 3, retryDelayInMs: 200 } });
    const transport = new AzureServiceBusTransport({ client, receiveWaitMs: 200, logger: silentLogger });
    const queue = uniqueQueue('console-locked');
    const dlq = transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : `${queue}.dlq`;
    for (const entity of [queue, dlq]) await configureQueue(asb.url!, entity, { lockDurationMs: 30_000 });
    await transport.connect({ timeoutMs: 10_000 });
    const bodies = Array.from({ length: 3 }, (_, i) => foreignRecord({ urn: 'urn:babel:t:x', queue, lang: 'php', dlLang: 'php', data: { i } }));
    for (const body of bodies) await transport.publishRaw!(dlq, body);
    // Another receiver (an operator's tool, a crashed action) holds the head record under a peek-lock.
    const holder = client.createReceiver(dlq, { receiveMode: 'peekLock', skipParsingBodyAsJson: true });
    const [held] = await holder.receiveMessages(1, { maxWaitTimeInMs: 10_000 });
    assert.ok(held !== undefined, 'the other receiver holds a record');
    const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, sampleEveryMs: 60_000 });
    try {
      const page = new ConsoleClient(running.url);
      await page.open();
      const rows = (await page.get('/api/records', { dlq })).body.records;
      assert.equal(rows.length, 3, 'a peek shows the locked record too');
      for (const path of ['/api/delete', '/api/redrive']) {
        const answer = await page.post(path, { dlq, records: [{ index: rows[0].index, hash: rows[0].hash }] });
        assert.equal(answer.status, 423, `${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.locked, 1);
        assert.equal(answer.body.not_found, 0);
        assert.ok(answer.body.retry_after_s > 0 && answer.body.retry_after_s <= 30, `seconds to wait: ${answer.body.retry_after_s}`);
        assert.match(answer.body.items[0].note, /^locked by another receiver, try again in \d+ s$/);
      }
      await holder.completeMessage(held!);
      const left = (await page.get('/api/records', { dlq })).body;
      assert.equal(left.depth, 2, 'nothing else was touched');
    } finally {
      await running.close();
      await holder.close();
      await transport.purge?.(dlq).catch(() => undefined);
      await transport.close();
      await client.close();
    }
  });
});
