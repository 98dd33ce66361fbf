// A consumer process for the crash test: prints "handling <id>" when its
// handler starts, then never finishes, so the record is never committed. The
// parent kills it with SIGKILL. Usage: crash-consumer.ts <url> <topic> <groupId>
import { createApp, silentLogger } from '@babelqueue/core';
import { KafkaTransport } from '../../src/index.js';

const [url, topic, groupId] = process.argv.slice(2) as [string, string, string];
const transport = new KafkaTransport({ url, groupId, sessionTimeoutMs: 6000, logger: silentLogger });
void createApp({ transport, queue: topic, logger: silentLogger })
  .handle('urn:babel:orders:created', (_data, msg) => {
    process.stdout.write(`handling ${msg.id}\n`);
    return new Promise(() => undefined);
  })
  .run();
