// The transport contract on Redis, in both key layouts.
import { RedisTransport, type RedisLayout } from '../src/index.js';
import { transportContract } from '../../../test/support/transport-contract.js';
import { broker, uniqueQueue } from './support/redis.js';

const redis = broker('redis');

for (const layout of ['legacy', 'zset'] as RedisLayout[]) {
  transportContract({
    name: `redis (${layout} layout)`,
    skip: redis.skip,
    open: () => ({
      // A short reservation, so what a consumer left unsettled comes back within the test.
      transport: (_queue, logger) => new RedisTransport({ url: redis.url!, layout, retryAfter: 2, logger }),
      queue: async (label) => uniqueQueue(`bq-redis-${layout}-${label}`),
    }),
  });
}
