// Trace interop with the Python SDK over real Kafka. Our binding carries the
// traceparent in record headers (the last scenario proves it), but the Python
// SDK's KafkaTransport (1.24.0) neither publishes nor surfaces record headers,
// so across languages the trace continues through trace_id: same trace id,
// the synthetic parent both SDKs derive.
import { KafkaTransport } from '@babelqueue/kafka';
import { silentLogger } from '@babelqueue/core';
import { broker } from '../support/brokers.js';
import { describeOtelInterop } from './support/otel-scenarios.js';

describeOtelInterop({
  name: 'kafka',
  broker: broker('kafka'),
  pythonCarriesHeaders: false,
  transport: (url, topic) => new KafkaTransport({ url, groupId: `${topic}.workers`, logger: silentLogger }),
  peerConsumeArgs: (topic) => ['--group', `${topic}.workers`],
  waitMs: 20_000,
});
