import { redisDriver } from './redis-common.js';

export default redisDriver({
  name: 'redis-cluster',
  layout: 'legacy',
  cluster: true,
  description: 'Redis Cluster (three masters), legacy layout on a hash-tagged queue, retryAfter 3 s',
});
