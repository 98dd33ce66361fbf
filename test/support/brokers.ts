/**
 * Broker wiring for integration suites. Each suite asks for its broker's URL;
 * outside CI a missing broker skips the suite with one loud line, under
 * `CI=true` it fails the run (a skipped broker suite must never pass CI).
 */
import { appendFileSync } from 'node:fs';
export type BrokerName = 'redis' | 'redis-cluster' | 'rabbitmq' | 'kafka' | 'artemis' | 'sqs' | 'pulsar' | 'asb' | 'postgres';

const ENV: Record<BrokerName, string> = {
  redis: 'BABELQUEUE_REDIS_URL',
  'redis-cluster': 'BABELQUEUE_REDIS_CLUSTER_URL',
  rabbitmq: 'BABELQUEUE_RABBITMQ_URL',
  kafka: 'BABELQUEUE_KAFKA_URL',
  artemis: 'BABELQUEUE_ARTEMIS_URL',
  sqs: 'BABELQUEUE_SQS_URL',
  pulsar: 'BABELQUEUE_PULSAR_URL',
  asb: 'BABELQUEUE_ASB_URL',
  postgres: 'BABELQUEUE_POSTGRES_URL',
};

export interface BrokerSuite {
  /** The broker URL, or undefined when the suite is skipped. */
  url: string | undefined;
  /** Pass as `describe(name, { skip }, ...)`. */
  skip: string | false;
}

/** Resolves a broker URL for a suite, or explains loudly why the suite is skipped. */
export function broker(name: BrokerName): BrokerSuite {
  const variable = ENV[name];
  const url = process.env[variable];
  if (url) return { url, skip: false };
  const why = `${variable} is not set; start it with \`scripts/brokers up ${name}\``;
  if (process.env.CI === 'true') {
    throw new Error(`broker suite "${name}" cannot run under CI=true: ${why}`);
  }
  process.stderr.write(`\n*** SKIPPED: ${name} broker suite — ${why} ***\n\n`);
  // scripts/run-tests.mjs names every skipped suite again in one line at the end of the run.
  const skippedFile = process.env.BABELQUEUE_SKIPPED_FILE;
  if (skippedFile) appendFileSync(skippedFile, `${name}\n`);
  return { url: undefined, skip: `SKIPPED (no ${name} broker): ${why}` };
}

/** A queue name unique to this test run, so parallel suites never collide. */
export function uniqueQueue(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
