// Differential conformance over Pulsar: the Python SDK over the binary
// protocol (pulsar://host:6650), ours over the WebSocket API on the same
// broker, topics persistent://public/default/<queue>, subscription
// "babelqueue" (Shared) from the earliest message, DLQ `<queue>.dlq`, the
// native schema version in the `bq-schema-version` property.
import { silentLogger } from '@babelqueue/core';
import { PulsarProperty, PulsarTransport } from '@babelqueue/pulsar';
import { broker } from '../support/brokers.js';
import { describeDifferential } from './support/driver.js';
import { inspectWith } from './support/inspect.js';

const lab = broker('pulsar');
const binaryUrl = lab.url === undefined ? undefined : `pulsar://${new URL(lab.url).hostname}:6650`;
const transport = (url: string, _queue?: string) => new PulsarTransport({ url, logger: silentLogger });

describeDifferential({
  name: 'pulsar',
  broker: { url: binaryUrl, skip: lab.skip },
  transport,
  versionKey: PulsarProperty.SCHEMA_VERSION,
  inspect: (url, queue, dlq) => inspectWith(transport(url), queue, dlq),
  async cleanup(_url, queues) {
    for (const queue of queues) {
      await fetch(`${lab.url}/admin/v2/persistent/public/default/${encodeURIComponent(queue)}?force=true`, { method: 'DELETE' }).catch(() => undefined);
    }
  },
});
