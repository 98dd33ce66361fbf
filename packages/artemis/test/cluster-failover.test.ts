import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createApp } from '@babelqueue/core';
import { ArtemisTransport } from '@babelqueue/artemis';
import { cluster, clusterNode } from '../../../test/support/clusters.js';
import { until } from '../../../test/support/until.js';
import { captureLogger, uniqueQueue } from './support/artemis.js';

const suite = cluster('artemis-ha');
const URN = 'urn:babel:orders:created';
const N = 300;
/** Publishes before the primary is killed: the rest go out through the backup. */
const KILL_AT = 100;

describe('Artemis primary/backup pair with replication (artemis-ha)', { skip: suite.skip }, () => {
  before(async () => {
  });

  it('the primary SIGKILLed mid-stream: clients fail over to the backup, every acknowledged publish is consumed', async () => {
    const queue = uniqueQueue('bq-art-ha');
    const fast = { reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } };
    const producerLog = captureLogger();
    const consumerLog = captureLogger();
    // A producer that waits out the failover (and sends again a publish whose outcome was lost: at-least-once).
    const producer = createApp({
      transport: new ArtemisTransport({ url: suite.url!, logger: producerLog, publishWhileDisconnected: 'wait', ...fast }),
      queue,
      logger: producerLog,
    });
    const consumed = new Map<number, number>();
    const consumer = createApp({ transport: new ArtemisTransport({ url: suite.url!, logger: consumerLog, ...fast }), queue, logger: consumerLog })
      .handle(URN, (data) => {
        const { n } = data as { n: number };
        consumed.set(n, (consumed.get(n) ?? 0) + 1);
      });
    const stop = new AbortController();
    const running = consumer.run({ signal: stop.signal });
    const acked: number[] = [];
    const failed: string[] = [];
    let killed: Promise<void> | undefined;
    try {
      for (let n = 0; n < N; n += 1) {
        if (n === KILL_AT) killed = clusterNode('kill-node', 'artemis-ha', String(1)).then(() => undefined);
        try {
          await producer.publish(URN, { n });
          acked.push(n);
        } catch (error) {
          failed.push(`${n}: ${(error as Error).message}`);
        }
      }
      await killed;
      await until(() => acked.every((n) => consumed.has(n)), 180_000, 'every acknowledged publish consumed');
    } finally {
      stop.abort();
      await running.catch(() => undefined);
      await producer.close();
      await killed;
      // Fail-back: the primary syncs from the backup and takes over again (the pair whole for the next run).
      await clusterNode('restore-node', 'artemis-ha', String(1));
    }
    assert.deepEqual(acked.filter((n) => !consumed.has(n)), [], 'nothing acknowledged is lost');
    assert.equal(acked.length, N, `every publish waited out the failover (failed: ${failed.join('; ')})`);
    const onBackup = (log: ReturnType<typeof captureLogger>) =>
      log.lines.some((l) => l.message === 'connected to Artemis' && l.fields.broker === 'amqp://admin:***@127.0.0.1:15674');
    assert.ok(onBackup(producerLog) && onBackup(consumerLog), 'producer and consumer said they connected to the backup');
    assert.ok(consumerLog.lines.some((l) => l.message === 'Artemis connection lost; reconnecting'), 'the loss was logged');
    const twice = [...consumed].filter(([, times]) => times > 1).length;
    process.stdout.write(`# artemis-ha: primary killed at publish ${KILL_AT}; ${acked.length}/${N} acknowledged, ${consumed.size} consumed, ${twice} twice\n`);
  });
});
