// The stand-in (test/support/asb-standin) runs in this process on a free port, behind a
// proxy that stops listening on demand, so the shared stand-in of `scripts/brokers up asb` is untouched.
import { after, before, describe, it } from 'node:test';
import { ServiceBusClient } from '@azure/service-bus';
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { startStandIn, type StandIn } from '../../../test/support/asb-standin/server.js';
import { CuttableProxy } from '../../../test/support/cuttable-proxy.js';
import { readinessAcrossOutage } from '../../../test/support/health-outage.js';
import { captureLogger, uniqueQueue } from './support/lab.js';

describe('azure service bus: health probes across a lost namespace', () => {
  let standIn: StandIn;
  before(async () => {
    standIn = await startStandIn({ port: 0, log: () => undefined });
  });
  after(async () => {
    standIn.dropConnections();
    await standIn.close();
  });

  it('/readyz fails while the namespace is unreachable and recovers with it; /healthz stays up; nothing is lost', async () => {
    const proxy = new CuttableProxy({ host: '127.0.0.1', port: standIn.port });
    await proxy.start();
    const logger = captureLogger();
    // Short operation timeouts: a receive on the lost connection fails in seconds, not after the SDK's default 3 x 30 s.
    const client = new ServiceBusClient(
      `Endpoint=sb://127.0.0.1:${proxy.port};SharedAccessKeyName=standin;SharedAccessKey=standin;UseDevelopmentEmulator=true`,
      { retryOptions: { timeoutInMs: 2_000, maxRetries: 1, retryDelayInMs: 100 } },
    );
    const transport = new AzureServiceBusTransport({ client, logger });
    try {
      await readinessAcrossOutage(transport, proxy, uniqueQueue('bq-asb-health'), logger);
    } finally {
      await client.close();
      await proxy.down();
    }
  });
});
