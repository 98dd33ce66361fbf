import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { EnvelopeCodec } from '@babelqueue/core';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { CREDENTIALS, Mapping, REGION, sqs } from './support/lab.js';

const pkg = join(import.meta.dirname, '..');

describe('README', { skip: sqs.skip }, () => {
  const mapping = new Mapping();
  after(() => mapping.close());

  it('the example handles a record from the lab and prints what it says', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const example = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const q = await mapping.queues('readme');
    const body = EnvelopeCodec.encode(EnvelopeCodec.make('urn:babel:orders:created', { order_id: 1042 }, { queue: q.name }));
    await mapping.client.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: body }));
    const event = await mapping.event(q, 1);

    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    const saved = { ...process.env };
    const log = console.log;
    const printed: string[] = [];
    try {
      Object.assign(process.env, {
        SQS_ENDPOINT: sqs.url!,
        AWS_REGION: REGION,
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
        BABELQUEUE_LOG_LEVEL: 'silent',
      });
      const file = join(dir, 'example.ts');
      writeFileSync(file, example);
      const { handler } = await import(pathToFileURL(file).href) as { handler: (e: SQSEvent, c: unknown) => Promise<SQSBatchResponse> };
      console.log = (...args: unknown[]) => void printed.push(args.join(' '));
      const response = await handler(event, { getRemainingTimeInMillis: () => 30_000 });
      console.log = log;
      assert.deepEqual(printed, ['order 1042 attempt 1']);
      assert.deepEqual(response, { batchItemFailures: [] });
    } finally {
      console.log = log;
      process.env = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
