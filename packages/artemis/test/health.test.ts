import { describe, it } from 'node:test';
import { ArtemisTransport } from '@babelqueue/artemis';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { readinessAcrossOutage } from '../../../test/support/health-outage.js';
import { artemis, artemisUrl, captureLogger, Raw, uniqueQueue } from './support/artemis.js';

describe('artemis: health probes across a lost connection', { skip: artemis.skip }, () => {
  it('/readyz fails while the broker is unreachable and recovers with it; /healthz stays up; nothing is lost', async () => {
    const u = new URL(artemis.url!);
    // The proxy stops listening on demand: the connection is cut and none comes back until it listens again.
    const proxy = new CuttableProxy({ host: u.hostname, port: Number(u.port) });
    await proxy.start();
    const q = uniqueQueue('bq-art-health');
    const logger = captureLogger();
    const transport = new ArtemisTransport({ url: proxy.url(artemisUrl()), reconnect: { initialDelayMs: 50, maxDelayMs: 300 }, logger });
    try {
      await readinessAcrossOutage(transport, proxy, q, logger);
    } finally {
      await proxy.down();
      const raw = await Raw.open();
      await raw.cleanup(q, `${q}.dlq`);
      await raw.close();
    }
  });
});
