import { describe, it } from 'node:test';
import { PulsarTransport } from '@babelqueue/pulsar';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { readinessAcrossOutage } from '../../../test/support/health-outage.js';
import { captureLogger, lab, RawPulsar, uniqueQueue } from './support/pulsar.js';

describe('pulsar: health probes across a lost connection', { skip: lab.skip }, () => {
  it('/readyz fails while the web service is unreachable and recovers with it; /healthz stays up; nothing is lost', async () => {
    const web = new URL(lab.url!);
    // The proxy stops listening on demand: the consumer's socket is cut and its reopening fails until it listens again.
    const proxy = new CuttableProxy({ host: web.hostname, port: Number(web.port || 8080) });
    await proxy.start();
    const q = uniqueQueue('bq-pulsar-health');
    const logger = captureLogger();
    const transport = new PulsarTransport({ url: `http://127.0.0.1:${proxy.port}`, reconnect: { initialDelayMs: 50, maxDelayMs: 300 }, logger });
    try {
      await readinessAcrossOutage(transport, proxy, q, logger);
    } finally {
      await proxy.down();
      await new RawPulsar(lab.url!).cleanup([q]);
    }
  });
});
