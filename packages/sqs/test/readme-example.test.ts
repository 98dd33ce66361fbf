import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DeleteQueueCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { CREDENTIALS, Raw, sqs, uniqueQueue } from './support/sqs.js';

const pkg = join(import.meta.dirname, '..');

describe('README', { skip: sqs.skip }, () => {
  it('the example runs and prints what it says', async () => {
    const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
    const example = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    // A queue of its own (and so a DLQ <queue>-dlq): several runs (other worktrees) share this server at once.
    const queue = uniqueQueue('readme');
    const code = example.replace("queue: 'orders'", `queue: '${queue}'`);
    assert.notEqual(code, example, "the example names its queue as queue: 'orders'");
    const raw = new Raw();
    const removeQueues = async () => {
      for (const QueueName of [queue, `${queue}-dlq`]) {
        const found = await raw.client.send(new GetQueueUrlCommand({ QueueName })).catch(() => undefined);
        if (found?.QueueUrl !== undefined) await raw.client.send(new DeleteQueueCommand({ QueueUrl: found.QueueUrl }));
      }
    };
    const dir = mkdtempSync(join(pkg, 'test', '.readme-'));
    try {
      const file = join(dir, 'example.ts');
      writeFileSync(file, code);
      const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        env: {
          ...process.env,
          SQS_ENDPOINT: sqs.url!,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
          BABELQUEUE_LOG_LEVEL: 'silent',
        },
      });
      assert.deepEqual(out.trim().split('\n'), ['order 1042 attempt 1', 'order 1043 attempt 1']);
      const url = (await raw.client.send(new GetQueueUrlCommand({ QueueName: queue }))).QueueUrl!;
      assert.deepEqual(await raw.counts(url), { visible: 0, inFlight: 0, delayed: 0 }, 'nothing left behind');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await removeQueues();
      await raw.close();
    }
  });
});
