/**
 * A console in a process of its own, for the kill-mid-redrive test: argv is
 * the target's name, the lab broker's URL, the DLQ, the journal directory and
 * the Kafka group id. Prints `listening <url>` once it listens; the test then
 * starts a redrive over HTTP and kills this process with SIGKILL.
 */
import { silentLogger } from '@babelqueue/core';
import { startConsole } from '../../src/index.js';
import { BROKERS } from './targets.js';

const [name, url, dlq, journalDir, id] = process.argv.slice(2) as [string, string, string, string, string];
const target = BROKERS.find((t) => t.name === name);
if (target === undefined) throw new Error(`no target named ${name}`);
const transport = await target.make(url, id);
await transport.connect({ timeoutMs: 20_000 });
const running = await startConsole({ transport, dlqs: [dlq], port: 0, logger: silentLogger, idleMs: 2000, sampleEveryMs: 600_000, journalDir });
process.stdout.write(`listening ${running.url}\n`);
