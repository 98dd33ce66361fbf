// Interop with the Python SDK over real Redis, in its default (legacy) layout:
// `<queue>` list, `<queue>:processing`, DLQ `<queue>.dlq`.
import { Redis } from 'ioredis';
import { RedisTransport } from '@babelqueue/redis';
import { silentLogger } from '@babelqueue/core';
import { broker } from '../support/brokers.js';
import { describeInterop } from './support/scenarios.js';

describeInterop({
  name: 'redis',
  broker: broker('redis'),
  transport: (url) => new RedisTransport({ url, layout: 'legacy', logger: silentLogger }),
  async cleanup(url, queues) {
    const redis = new Redis(url);
    const keys = queues.flatMap((q) => [q, `${q}:processing`, `${q}:processing:deadlines`]);
    await redis.del(...keys);
    await redis.quit();
  },
});
