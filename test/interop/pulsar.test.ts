// Interop with the Python SDK (PulsarTransport over pulsar-client, the binary
// protocol on 6650) on the lab's Pulsar, beside our binding on the same broker
// (consuming on the binary protocol too, publishing over the WebSocket API):
// topics persistent://public/default/<queue>, one subscription "babelqueue"
// (Shared) that both sides attach to in turn, DLQ `<queue>.dlq`. The lab's env
// names the web service (http://host:8080); the Python SDK spells the binary
// URL, pulsar://host:6650, and our binding derives the web service from that
// same URL.
import assert from 'node:assert/strict';
import { silentLogger } from '@babelqueue/core';
import { PulsarTransport } from '@babelqueue/pulsar';
import { broker } from '../support/brokers.js';
import { describeInterop } from './support/scenarios.js';

const lab = broker('pulsar');
const binaryUrl = lab.url === undefined ? undefined : `pulsar://${new URL(lab.url).hostname}:6650`;

describeInterop({
  name: 'pulsar',
  broker: { url: binaryUrl, skip: lab.skip },
  transport: (url) => new PulsarTransport({ url, logger: silentLogger }),
  waitMs: 10_000,
  async cleanup(_url, queues) {
    for (const queue of queues) {
      await fetch(`${lab.url}/admin/v2/persistent/public/default/${encodeURIComponent(queue)}?force=true`, { method: 'DELETE' }).catch(() => undefined);
    }
  },
  // The bq- properties mirror the body (strings). The Python SDK's Pulsar
  // transport does not hand properties to its runtime, so only one direction;
  // our produce-side projection is read back with a raw consumer in
  // packages/pulsar/test/publish.test.ts.
  native: {
    fromPython(m) {
      assert.equal(m.headers['bq-job'], m.urn);
      assert.equal(m.headers['bq-trace-id'], m.traceId);
      assert.equal(m.headers['bq-message-id'], m.id);
      assert.equal(m.headers['bq-schema-version'], '1');
      assert.equal(m.headers['bq-source-lang'], 'python');
      assert.equal(m.headers['bq-attempts'], '0');
    },
  },
});
