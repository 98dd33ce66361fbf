import { describe, it } from 'node:test';
import { RabbitMqTransport } from '../src/index.js';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { readinessAcrossOutage } from '../../../test/support/health-outage.js';
import { captureLogger, rabbit, uniqueQueue } from './support/rabbit.js';

describe('rabbitmq: health probes across a lost connection', { skip: rabbit.skip }, () => {
  it('/readyz fails while the broker is unreachable and recovers with it; /healthz stays up; nothing is lost', async () => {
    const url = new URL(rabbit.url!);
    // The proxy stops listening on demand: the connection is cut and none comes back until it listens again.
    const proxy = new CuttableProxy({ host: url.hostname, port: Number(url.port || 5672) });
    await proxy.start();
    try {
      const logger = captureLogger();
      const transport = new RabbitMqTransport({ url: proxy.url(rabbit.url!), reconnect: { initialDelayMs: 50, maxDelayMs: 500 }, logger });
      await readinessAcrossOutage(transport, proxy, uniqueQueue('health'), logger);
    } finally {
      await proxy.down();
    }
  });
});
