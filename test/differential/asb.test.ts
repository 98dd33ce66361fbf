// Differential conformance through the Service Bus stand-in
// (test/support/asb-standin: an AMQP 1.0 server both official clients talk to;
// not Service Bus): queues appear on first use, DLQ `<queue>.dlq`, an ordinary
// queue; the native schema version in the `bq-schema-version` application
// property. The Python SDK is handed the connection string as it reads one
// (peer.py, `sb://` with AZURE_SERVICEBUS_CONNECTION_STRING).
import { AzureServiceBusTransport } from '@babelqueue/azure-service-bus';
import { silentLogger } from '@babelqueue/core';
import { broker } from '../support/brokers.js';
import { describeDifferential } from './support/driver.js';
import { inspectWith } from './support/inspect.js';

const transport = (url: string, _queue?: string) => new AzureServiceBusTransport({ connectionString: url, logger: silentLogger });

describeDifferential({
  name: 'asb',
  broker: broker('asb'),
  transport,
  versionKey: 'bq-schema-version',
  inspect: (url, queue, dlq) => inspectWith(transport(url), queue, dlq),
  async cleanup(url, queues) {
    const t = transport(url);
    try {
      // At once: one purge after the other took minutes on the stand-in.
      await Promise.all(queues.map((q) => t.purge(q).catch(() => 0)));
    } finally {
      await t.close();
    }
  },
});
