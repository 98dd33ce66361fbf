// Makes docs/console.png, the README's picture: a console on the in-memory
// broker with a varied DLQ (records from five languages, poison, markup),
// photographed by Debian's headless Chromium.
// Run: node --conditions=source --import tsx packages/console/scripts/screenshot.ts
import { join } from 'node:path';
import { InMemoryTransport, silentLogger } from '@babelqueue/core';
import { startConsole } from '../src/index.js';
import { launch } from '../test/support/browser.js';
import { foreignRecord, poison, XSS } from '../test/support/records.js';

const transport = new InMemoryTransport();
const now = Date.now();
const langs = [['php', 'php'], ['go', 'python'], ['python', 'node'], ['node', 'java'], ['java', 'go'], ['dotnet', 'php']] as const;
const urns = ['urn:babel:orders:created', 'urn:babel:payments:captured', 'urn:babel:mail:send', 'urn:babel:stock:reserved'];
const failures = [
  ['SMTP 451 4.7.0 temporary failure, try again later', 'Swift_TransportException'],
  ['payment gateway timeout after 30s', 'TimeoutError'],
  ['SQLSTATE[40001]: Deadlock found when trying to get lock', 'PDOException'],
  ['stock service returned 503 Service Unavailable', 'requests.exceptions.HTTPError'],
] as const;
for (let i = 0; i < 240; i++) {
  const [lang, dlLang] = langs[i % langs.length]!;
  const unknown = i % 11 === 0;
  const [error, exception] = failures[(i * 3) % failures.length]!;
  await transport.publishRaw('orders.dlq', foreignRecord({
    urn: urns[(i * 7) % urns.length]!, queue: 'orders', lang, dlLang,
    reason: unknown ? 'unknown_urn' : 'failed',
    error: unknown ? 'no handler registered for this URN' : error,
    exception: unknown ? null : exception,
    failedAt: now - (240 - i) * 45_000,
    data: { order_id: 1000 + i },
  }));
}
await transport.publishRaw('orders.dlq', poison(Buffer.from([0xff, 0x0e, 0x41]), 'orders'));
await transport.publishRaw('orders.dlq', poison(XSS, 'orders', 'body is not a JSON object'));
await transport.publishRaw('payments.dlq', foreignRecord({ urn: 'urn:babel:payments:captured', queue: 'payments', lang: 'go', dlLang: 'go' }));
const server = await startConsole({ transport, queues: ['orders', 'payments'], port: 0, logger: silentLogger, sampleEveryMs: 200 });
// Give the depth chart a history to draw: the DLQ grows while the console samples it.
for (let i = 0; i < 12; i++) {
  await new Promise((r) => setTimeout(r, 220));
  for (let j = 0; j < 6; j++) await transport.publishRaw('orders.dlq', foreignRecord({ urn: urns[j % urns.length]!, queue: 'orders', lang: 'php', dlLang: 'php', error: failures[1][0], exception: failures[1][1] }));
}
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForTimeout(300);
  const out = join(import.meta.dirname, '..', 'docs', 'console.png');
  await page.screenshot({ path: out });
  process.stdout.write(`${out}\n`);
} finally {
  await browser.close();
  await server.close();
}
