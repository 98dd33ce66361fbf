import { afterEach, describe, it } from 'node:test';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { readinessAcrossOutage } from '../../../test/support/health-outage.js';
import { broker, captureLogger, closeTransports, transport, uniqueQueue } from './support/redis.js';

const b = broker('redis');

describe('redis: health probes across a lost connection', { skip: b.skip }, () => {
  afterEach(closeTransports);

  for (const layout of ['zset', 'legacy'] as const) {
    it(`${layout}: /readyz fails while the broker is unreachable and recovers with it; /healthz stays up; nothing is lost`, async () => {
      const url = new URL(b.url!);
      // The proxy stops listening on demand: every connection of the App is cut and none comes back until it listens again.
      const proxy = new CuttableProxy({ host: url.hostname, port: Number(url.port || 6379) });
      await proxy.start();
      try {
        const { t } = transport(proxy.url(b.url!), { layout });
        await readinessAcrossOutage(t, proxy, uniqueQueue(`${layout}-health`), captureLogger());
      } finally {
        await proxy.down();
      }
    });
  }
});
