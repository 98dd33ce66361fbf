import { Cluster } from 'ioredis';
import { coalesceWrites } from '@babelqueue/core/binding';
import type { RedisClient } from './options.js';

/**
 * Before a publish: the commands written after the first in one run of
 * callbacks leave the client's socket in one write ({@link coalesceWrites};
 * ioredis writes each command by itself). A Cluster spreads its commands over several sockets:
 * left alone.
 */
export function coalescePublishes(client: RedisClient): void {
  if (client instanceof Cluster || client.stream === undefined) return;
  coalesceWrites(client.stream);
}
