import type { Redis } from 'ioredis';
import type { Logger } from '@babelqueue/core';
import type { RedisClient } from './options.js';

/** Clients this package closed on purpose: {@link reviveWhenEnded} leaves their end alone. */
const closedOnPurpose = new WeakSet<RedisClient>();

/** Closes `client` at once (no QUIT), on purpose. */
export function disconnectClient(client: RedisClient): void {
  closedOnPurpose.add(client);
  client.disconnect();
}

/** Sends QUIT to `client`, on purpose; rejects as `quit()` does. */
export async function quitClient(client: RedisClient): Promise<void> {
  closedOnPurpose.add(client);
  await client.quit();
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * Connects a Sentinel client again when ioredis ended it by itself.
 *
 * ioredis's failover detector disconnects the connector on a Sentinel's
 * +switch-master; when that lands while the client is asking the Sentinels
 * for the primary (a reconnect after the primary's death), the connector
 * throws "Connection is closed.", the client's status becomes `end`, and
 * ioredis never connects it again: every later command fails with that
 * message (redis/ioredis#1683; the redis-sentinel-legacy chaos row's producer
 * failed so until the run gave up). Retries 100 ms doubling to 5 s.
 */
export function reviveWhenEnded(client: Redis, logger: Logger): void {
  let waitMs = FIRST_RETRY_MS;
  client.on('ready', () => {
    waitMs = FIRST_RETRY_MS;
  });
  client.on('end', () => {
    if (closedOnPurpose.has(client)) return;
    logger.warn({ retryInMs: waitMs }, 'ioredis ended the Sentinel connection by itself (a failover met its reconnect); connecting again');
    const timer = setTimeout(() => {
      if (closedOnPurpose.has(client) || client.status !== 'end') return;
      // A failed connect ends the client again, and this runs once more.
      client.connect().catch(() => undefined);
    }, waitMs);
    timer.unref();
    waitMs = Math.min(waitMs * 2, MAX_RETRY_MS);
  });
}
