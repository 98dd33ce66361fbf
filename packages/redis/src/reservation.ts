import { type Logger } from '@babelqueue/core';
import { ReservationKeeper } from '@babelqueue/core/binding';
import { deadlineScore } from './clock.js';
import type { RedisClient } from './options.js';
import { SCRIPTS } from './scripts.js';

/**
 * The keeper of one reserver's reservations: while a handler runs, its
 * deadline member's score is pushed to `now + retryAfter`, so a slow handler
 * that is still alive is never recovered and handed to another consumer.
 * Undefined with `retryAfter: null` (a reservation never expires).
 */
export function reservationKeeper(retryAfter: number | null, logger: Logger, ids: Record<string, unknown>): ReservationKeeper | undefined {
  if (retryAfter === null || retryAfter <= 0) return undefined;
  return new ReservationKeeper({
    // Scores are whole seconds (floor(now) + retryAfter), so a reservation can
    // end up to a second early: renew against the shortest it may last.
    reservationMs: Math.max(0, retryAfter * 1000 - 1000),
    onTrouble: (why, lost) => (lost ? logger.error : logger.warn)(ids, why),
  });
}

/** Renews one reservation: its member in the deadlines / `:reserved` zset, only while it is still there. */
export function renewal(client: RedisClient, zset: string, member: Buffer, retryAfter: number): () => Promise<boolean> {
  return async () => ((await SCRIPTS.renew.run(client, [zset], [deadlineScore(retryAfter), member])) as number[])[0] === 1;
}
