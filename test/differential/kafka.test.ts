// Differential conformance over Kafka, with retry tiers (one tier, 1 s; each
// SDK's re-inject consumer moves due retries back) and without. One consumer
// group per topic (`<topic>.workers`), DLQ `<topic>.dlq`, the native schema
// version in the `bq-schema-version` header. "Left for redelivery" is the
// group's lag on the work topic once its consumer stopped.
import { silentLogger } from '@babelqueue/core';
import { KafkaTransport } from '@babelqueue/kafka';
import { broker } from '../support/brokers.js';
import { describeDifferential, type DifferentialTarget } from './support/driver.js';
import { inspectWith } from './support/inspect.js';

const TIERS = [1000];
const lab = broker('kafka');

function kafka(name: string, tiers: number[] | undefined): DifferentialTarget {
  const transport = (url: string, topic: string) =>
    new KafkaTransport({
      url,
      groupId: `${topic}.workers`,
      logger: silentLogger,
      ...(tiers === undefined ? {} : { retryTiersMs: tiers, reinjectGroupId: `${topic}.reinject` }),
    });
  return {
    name,
    broker: lab,
    transport,
    versionKey: 'bq-schema-version',
    // A group join takes seconds, more with every row's consumers joining at once.
    idleMs: 12_000,
    peerRow: (topic) => ({ group: `${topic}.workers`, ...(tiers === undefined ? {} : { retry_tiers_ms: tiers.join(','), reinject: true }) }),
    inspect: (url, topic, dlq) => inspectWith(transport(url, topic), topic, dlq),
  };
}

describeDifferential(kafka('kafka', TIERS));
describeDifferential(kafka('kafka-no-tiers', undefined));
