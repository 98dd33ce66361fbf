import { redisDriver } from './redis-common.js';

export default redisDriver({
  name: 'redis-legacy',
  layout: 'legacy',
  cluster: false,
  description: 'Redis 7, legacy reliable-queue layout (the default), retryAfter 3 s',
});
