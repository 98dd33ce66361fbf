// Differential conformance over Redis in the legacy layout (the Python SDK's
// default): `<queue>` list, `<queue>:processing`, DLQ `<queue>.dlq`. Redis has
// no native schema-version metadata, so the version rows do not apply.
import { Redis } from 'ioredis';
import { silentLogger } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import { broker } from '../support/brokers.js';
import { describeDifferential } from './support/driver.js';
import { scanAll } from './support/inspect.js';

const transport = (url: string, _queue?: string) => new RedisTransport({ url, layout: 'legacy', logger: silentLogger });

describeDifferential({
  name: 'redis-legacy',
  broker: broker('redis'),
  transport,
  async inspect(url, queue, dlq) {
    const redis = new Redis(url);
    const reader = transport(url);
    try {
      const left = (await redis.llen(queue)) + (await redis.llen(`${queue}:processing`));
      return { left, dlq: await scanAll(reader, dlq) };
    } finally {
      redis.disconnect();
      await reader.close();
    }
  },
  async cleanup(url, queues) {
    const redis = new Redis(url);
    await redis.del(...queues.flatMap((q) => [q, `${q}:processing`, `${q}:processing:deadlines`]));
    redis.disconnect();
  },
});
