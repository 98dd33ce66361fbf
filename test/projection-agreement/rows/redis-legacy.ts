import { Redis } from 'ioredis';
import { silentLogger } from '@babelqueue/core';
import { frameValue, RedisTransport, unframe } from '@babelqueue/redis';
import { broker, uniqueQueue } from '../../support/brokers.js';
import { until } from '../../support/until.js';
import type { AgreementLab, AgreementRow, NativeRecord, ProduceOptions } from '../row.js';

const suite = broker('redis');

/**
 * Redis lists carry no metadata: the legacy layout's only native channel is the
 * `__bq_frame` headers, which hold riders and never a projected field. So the
 * contract is empty and the riders must come through unchanged (no contract
 * key may appear among them).
 */
function nativeOf(value: Buffer): NativeRecord {
  const { body, headers } = unframe(value);
  return { body, contract: {}, riders: { ...headers } };
}

class RedisLegacyLab implements AgreementLab {
  private readonly redis: Redis;
  private readonly keys: string[] = [];

  constructor(private readonly url: string) {
    this.redis = new Redis(url);
  }

  async queue(prefix: string): Promise<string> {
    const name = uniqueQueue(`bq-agree-${prefix}`);
    this.keys.push(name, `${name}:processing`, `${name}:processing:deadlines`, `${name}.dlq`);
    return name;
  }

  transport(): RedisTransport {
    return new RedisTransport({ url: this.url, layout: 'legacy', logger: silentLogger });
  }

  async produce(queue: string, body: Buffer, options: ProduceOptions = {}): Promise<void> {
    await this.redis.rpush(queue, frameValue(body, options.riders));
  }

  readRetry(queue: string): Promise<NativeRecord> {
    return this.head(queue);
  }

  readDeadLetter(dlq: string): Promise<NativeRecord> {
    return this.head(dlq);
  }

  project(): Record<string, unknown> {
    return {};
  }

  async close(): Promise<void> {
    if (this.keys.length > 0) await this.redis.del(...this.keys);
    await this.redis.quit();
  }

  private async head(key: string): Promise<NativeRecord> {
    let value: Buffer | null = null;
    await until(async () => (value = await this.redis.lindexBuffer(key, 0)) !== null, 5000, `a value on ${key}`);
    return nativeOf(value!);
  }
}

export const row: AgreementRow = {
  binding: 'redis-legacy',
  skip: suite.skip,
  fields: {},
  versionGate: false,
  // Poison on Redis is dead-lettered in every configuration, never retried.
  poisonRetry: false,
  // A delivery's frame riders ride its dead-letter record in a frame (like the Python SDK's).
  ridersOnDeadLetter: true,
  open: async () => new RedisLegacyLab(suite.url!),
};
