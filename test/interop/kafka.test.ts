// Interop with the Python SDK (KafkaTransport over confluent-kafka) on real
// Kafka: topics auto-created, DLQ `<topic>.dlq`, one consumer group per topic
// that both sides join in turn (as a mixed-language worker pool would), and one
// retry tier (`<topic>.retry.1`, 1 s) on both sides: a retry parked by one SDK
// is moved back to the work topic by the other SDK's re-inject consumer.
import assert from 'node:assert/strict';
import { KafkaTransport } from '@babelqueue/kafka';
import { silentLogger } from '@babelqueue/core';
import { broker, uniqueQueue } from '../support/brokers.js';
import { describeInterop } from './support/scenarios.js';

const TIERS = [1000];

describeInterop({
  name: 'kafka',
  broker: broker('kafka'),
  transport: (url, topic) => new KafkaTransport({ url, groupId: `${topic}.workers`, retryTiersMs: TIERS, logger: silentLogger }),
  peerConsumeArgs: (topic) => ['--group', `${topic}.workers`, '--retry-tiers-ms', TIERS.join(',')],
  // The bq- headers mirror the body (UTF-8 strings). The Python SDK's Kafka
  // transport does not surface headers to its runtime, so only one direction.
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
  async retryHandOver(url, queue, peer) {
    await peer.run([
      'reinject', '--url', url, '--queue', queue, '--retry-tiers-ms', TIERS.join(','),
      '--group', uniqueQueue('interop-py-reinject'), '--timeout', '20',
    ]);
  },
});
