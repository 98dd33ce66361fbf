import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dlqName, transportFromUrl } from '@babelqueue/core';
import { broker, uniqueQueue, type BrokerName } from '../../../test/support/brokers.js';
import { jsonLines, run } from './support/capture.js';

/** Each lab broker as the CLI is pointed at it (`--url`). */
const BROKERS: [string, BrokerName, (url: string) => string][] = [
  ['Redis (legacy layout)', 'redis', (url) => url],
  ['Redis (zset layout)', 'redis', (url) => `${url}?layout=zset`],
  ['RabbitMQ', 'rabbitmq', (url) => url],
  ['Kafka', 'kafka', (url) => url],
  ['SQS', 'sqs', (url) => `sqs://us-east-1?endpoint=${url}&wait_time=1&create_queues=1`],
  ['Pulsar', 'pulsar', (url) => `pulsar://${new URL(url).hostname}:6650?http=${new URL(url).port}`],
  ['Artemis', 'artemis', (url) => url.replace(/^amqp:/, 'artemis:')],
];

function record(id: string, queue: string): Buffer {
  return Buffer.from(JSON.stringify({
    job: 'urn:babel:t:x', trace_id: `t-${id}`, data: {}, meta: { id, queue, lang: 'go', schema_version: 1, created_at: 1 }, attempts: 2,
    dead_letter: { reason: 'failed', error: 'boom', exception: 'E', failed_at: 2, original_queue: queue, attempts: 3, lang: 'go' },
  }));
}

// SQS credentials come from the standard AWS chain: here the environment, any static key the lab accepts.
process.env.AWS_ACCESS_KEY_ID ??= 'babelqueue';
process.env.AWS_SECRET_ACCESS_KEY ??= 'babelqueue';

for (const [name, suiteName, urlFor] of BROKERS) {
  const suite = broker(suiteName);
  describe(`babelqueue dlq list on ${name}`, { skip: suite.skip }, () => {
    test('lists every record through the core dead-letter reader; its count is the broker\'s depth; --max cuts it and says partial', async () => {
      const url = urlFor(suite.url!);
      const transport = await transportFromUrl(url);
      await transport.connect({ timeoutMs: 20_000 });
      const queue = uniqueQueue('cli-list');
      const dlq = transport.rules.dlqName ? transport.rules.dlqName(queue, undefined) : dlqName(queue);
      try {
        const ids = Array.from({ length: 5 }, (_, i) => `r${i}`);
        for (const id of ids) await transport.publishRaw!(dlq, record(id, queue));
        const list = await run(['dlq', 'list', '--url', url, '--dlq', dlq, '--json']);
        assert.equal(list.code, 0, list.err);
        const listed = jsonLines(list.out)[0] as { count: number; depth: number; partial: boolean; records: { id: string }[] };
        assert.deepEqual([listed.count, listed.depth, listed.partial], [5, 5, false], list.out);
        assert.deepEqual(listed.records.map((r) => r.id).sort(), ids);
        assert.equal(await transport.depth!(dlq), 5, 'the broker counts what was listed');
        const cut = await run(['dlq', 'list', '--url', url, '--dlq', dlq, '--max', '2']);
        assert.equal(cut.code, 0, cut.err);
        assert.match(cut.err, new RegExp(`^2 of 5 records on ${dlq} \\(partial: the first 2; --max for more\\)\\n$`));
        const show = await run(['dlq', 'show', '--url', url, '--dlq', dlq, 'r3', '--json']);
        assert.equal(show.code, 0, show.err);
        assert.equal(JSON.parse(show.out).meta.id, 'r3');
      } finally {
        await transport.purge?.(dlq).catch(() => undefined);
        await transport.close();
      }
    });
  });
}
