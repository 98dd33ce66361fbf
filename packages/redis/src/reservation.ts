import { keepReserved, type Logger } from '@babelqueue/core';
import { deadlineScore } from './clock.js';
import type { RedisClient } from './options.js';
import { SCRIPTS } from './scripts.js';

/**
 * Keeps one reservation alive while its handler runs: every third of
 * `retryAfter` the deadline member's score is pushed to `now + retryAfter`, so
 * a slow handler that is still alive is never recovered and handed to another
 * consumer. Returns the function that stops it (on settle). With `retryAfter:
 * null` the reservation never expires and nothing is renewed.
 */
export function holdReservation(
  client: RedisClient,
  zset: string,
  member: Buffer,
  retryAfter: number | null,
  logger: Logger,
  ids: Record<string, unknown>,
): () => void {
  if (retryAfter === null || retryAfter <= 0) return () => undefined;
  return keepReserved({
    // Scores are whole seconds (floor(now) + retryAfter), so a reservation can
    // end up to a second early: renew against the shortest it may last.
    reservationMs: Math.max(0, retryAfter * 1000 - 1000),
    renew: async () => (await SCRIPTS.renew.run(client, [zset], [deadlineScore(retryAfter), member])) === 1,
    onTrouble: (why, lost) => (lost ? logger.error : logger.warn)(ids, why),
  });
}
