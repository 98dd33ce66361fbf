// A consumer process for the crash test: prints "handling <id>" when its
// handler starts, then never finishes, so the record is never committed. The
// parent kills it with SIGKILL. Usage: crash-consumer.ts <url> <topic> <groupId>
import { consoleLogger, createApp } from '@babelqueue/core';
import { KafkaTransport } from '../../src/index.js';

const [url, topic, groupId] = process.argv.slice(2) as [string, string, string];
// Warnings reach the parent's output: a child slow to start on a busy machine says why.
const logger = consoleLogger('warn');
const transport = new KafkaTransport({ url, groupId, sessionTimeoutMs: 6000, logger });
void createApp({ transport, queue: topic, logger })
  .handle('urn:babel:orders:created', (_data, msg) => {
    process.stdout.write(`handling ${msg.id}\n`);
    return new Promise(() => undefined);
  })
  .run();
