// Differential conformance over Redis in the zset layout (Laravel's: `queues:<name>`,
// `:delayed`, `:reserved`, `:notify`; the Python SDK's `laravel=1`), DLQ
// `queues:<queue>.dlq`. The layout keeps no native metadata beside the body,
// so the version rows do not apply.
import { Redis } from 'ioredis';
import { silentLogger } from '@babelqueue/core';
import { RedisTransport } from '@babelqueue/redis';
import { broker } from '../support/brokers.js';
import { describeDifferential } from './support/driver.js';
import { scanAll } from './support/inspect.js';

const lab = broker('redis');
// The Python SDK reads the layout from the URL; ours from its option.
const transport = (url: string, _queue?: string) => new RedisTransport({ url: url.split('?')[0]!, layout: 'zset', logger: silentLogger });

describeDifferential({
  name: 'redis-zset',
  broker: { ...lab, url: lab.url === undefined ? undefined : `${lab.url}?laravel=1` },
  transport,
  async inspect(url, queue, dlq) {
    const redis = new Redis(url.split('?')[0]!);
    const reader = transport(url);
    try {
      const ready = `queues:${queue}`;
      const left = (await redis.llen(ready)) + (await redis.zcard(`${ready}:reserved`)) + (await redis.zcard(`${ready}:delayed`));
      return { left, dlq: await scanAll(reader, dlq) };
    } finally {
      redis.disconnect();
      await reader.close();
    }
  },
  async cleanup(url, queues) {
    const redis = new Redis(url.split('?')[0]!);
    await redis.del(...queues.flatMap((q) => ['', ':reserved', ':delayed', ':notify'].map((s) => `queues:${q}${s}`)));
    redis.disconnect();
  },
});
