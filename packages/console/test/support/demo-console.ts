// Scratch: a console on the in-memory broker with a varied DLQ, for looking at the page.
import { InMemoryTransport, silentLogger } from '@babelqueue/core';
import { startConsole } from '../../src/index.js';
import { foreignRecord, poison, XSS } from './records.js';

const transport = new InMemoryTransport();
const now = Date.now();
const langs = [['php', 'php'], ['go', 'python'], ['python', 'node'], ['node', 'java'], ['java', 'go']];
const urns = ['urn:babel:orders:created', 'urn:babel:payments:captured', 'urn:babel:mail:send', 'urn:babel:stock:reserved'];
for (let i = 0; i < 180; i++) {
  const [lang, dl] = langs[i % langs.length]!;
  await transport.publishRaw('orders.dlq', foreignRecord({
    urn: urns[(i * 7) % urns.length]!, queue: 'orders', lang: lang!, dlLang: dl!,
    reason: i % 9 === 0 ? 'unknown_urn' : 'failed',
    error: i % 9 === 0 ? 'no handler for this URN' : ['SMTP 451 temporary failure', 'payment gateway timeout after 30s', 'Deadlock found when trying to get lock', 'stock service returned 503'][i % 4]!,
    exception: i % 9 === 0 ? null : ['Swift_TransportException', 'TimeoutError', 'PDOException', 'requests.HTTPError'][i % 4]!,
    failedAt: now - (180 - i) * 60_000,
    data: { order_id: 1000 + i },
  }));
}
await transport.publishRaw('orders.dlq', poison(Buffer.from([0xff, 0x0e, 0x41]), 'orders'));
await transport.publishRaw('orders.dlq', poison(XSS, 'orders', 'body is not a JSON object'));
await transport.publishRaw('orders.dlq', foreignRecord({ urn: 'urn:babel:orders:created', queue: 'orders', lang: 'php', dlLang: 'php', error: XSS, exception: XSS, data: { note: XSS } }));
await transport.publishRaw('payments.dlq', foreignRecord({ urn: 'urn:babel:payments:captured', queue: 'payments', lang: 'go', dlLang: 'go' }));
const running = await startConsole({ transport, queues: ['orders', 'payments'], port: Number(process.env.PORT ?? 0), logger: silentLogger, sampleEveryMs: 1000 });
process.stdout.write(`${running.url}\n`);
