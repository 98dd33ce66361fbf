import type { FuzzBody } from '../fuzz/bodies.js';
import { redisDriver } from './redis-common.js';

const common = redisDriver({
  name: 'redis-zset',
  layout: 'zset',
  cluster: false,
  description: "Redis 7, Laravel's zset layout, retryAfter 3 s",
});

export default {
  ...common,
  // The reserve script decodes and re-encodes every body with Redis's cjson
  // before the core sees it, and a body cjson refuses is poison (the spec's
  // "a body that does not decode is written to the DLQ as poison"): cjson
  // stops at 1000 levels and cannot encode a number that overflowed to Infinity.
  fuzzOutcome: (body: FuzzBody) => (body.depth > 1000 || body.overflow ? 'poison' : undefined),
};
