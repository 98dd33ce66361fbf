/**
 * The Kafka targets of the differential suite (kafka.test.ts with one retry tier,
 * kafka-no-tiers.test.ts without; two files so that they run side by side).
 * Differential conformance over Kafka, with retry tiers (one tier, 1 s; each
 * SDK's re-inject consumer moves due retries back) and without. One consumer
 * group per topic (`<topic>.workers`), DLQ `<topic>.dlq`, the native schema
 * version in the `bq-schema-version` header. "Left for redelivery" is the
 * group's lag on the work topic once its consumer stopped, plus what waits in a
 * tier topic for the re-inject group (`<topic>.reinject`, both SDKs).
 */
import { silentLogger } from '@babelqueue/core';
import { KafkaTransport } from '@babelqueue/kafka';
import { broker } from '../../support/brokers.js';
import type { DifferentialTarget } from './driver.js';
import { inspectWith } from './inspect.js';

/** The one retry tier of the `kafka` target. */
export const TIERS = [1000];
const lab = broker('kafka');

/** The Kafka target `name`, with the retry tiers `tiers` or none. */
export function kafkaTarget(name: string, tiers: number[] | undefined): DifferentialTarget {
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
    // The retry tier decides a Kafka retry's delay in both SDKs (retry_backoff is ignored).
    recordsDelays: false,
    // A group join takes seconds, more with every row's consumers joining at once.
    idleMs: 12_000,
    peerRow: (topic) => ({ group: `${topic}.workers`, ...(tiers === undefined ? {} : { retry_tiers_ms: tiers.join(','), reinject: true }) }),
    async inspect(url, topic, dlq) {
      const seen = await inspectWith(transport(url, topic), topic, dlq);
      if (tiers === undefined) return seen;
      // A retry parked in a tier topic, not yet moved back by the re-inject consumer, is left too.
      const reinject = new KafkaTransport({ url, groupId: `${topic}.reinject`, logger: silentLogger });
      try {
        let parked = 0;
        for (let tier = 1; tier <= tiers.length; tier++) parked += await reinject.depth(`${topic}.retry.${tier}`);
        return { ...seen, left: seen.left + parked };
      } finally {
        await reinject.close();
      }
    },
  };
}

