import { describe, it } from 'node:test';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { readinessAcrossOutage } from '../../../test/support/health-outage.js';
import { Raw, sqs, transport } from './support/sqs.js';

describe('sqs: health probes across a lost endpoint', { skip: sqs.skip }, () => {
  it('/readyz fails while the endpoint is unreachable and recovers with it; /healthz stays up; nothing is lost', async () => {
    const raw = new Raw();
    const { hostname, port } = new URL(sqs.url!);
    // The proxy stops listening on demand: every request fails to connect until it listens again.
    const proxy = new CuttableProxy({ host: hostname, port: Number(port) });
    await proxy.start();
    try {
      const { name } = await raw.fresh('health');
      const endpoint = proxy.url(sqs.url!).replace(/\/$/, '');
      // Queue URLs through the relay too (ElasticMQ names its own address in GetQueueUrl).
      const { transport: t, logger } = transport({ endpoint, queueUrlPrefix: `${endpoint}/000000000000`, waitTimeSeconds: 1, requestTimeoutMs: 6_000 });
      await readinessAcrossOutage(t, proxy, name, logger);
    } finally {
      await proxy.down();
      await raw.close();
    }
  });
});
