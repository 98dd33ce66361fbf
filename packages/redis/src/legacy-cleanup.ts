import { legacyKeys } from './keys.js';
import type { RedisClient } from './options.js';
import { SCRIPTS } from './scripts.js';
import { slotGuard } from './errors.js';

/** Options of {@link legacyCleanup}. */
export interface LegacyCleanupOptions {
  /** Must be `true`: you confirm that every consumer of the queue is stopped. */
  readonly consumersStopped: boolean;
}

/**
 * Returns the `+inf` reservations of a legacy-layout queue (written by
 * consumers running with `retryAfter: null`) to the ready list, in one atomic
 * script: each member's raw part goes back only if it is still on
 * `:processing`, and the member is removed. Resolves with the number of
 * members handled. Refuses to run unless told the consumers are stopped,
 * because a live consumer's reservation would be handed out twice.
 * Backs `babelqueue redis legacy-cleanup --queue Q`.
 */
export async function legacyCleanup(redis: RedisClient, queue: string, options: LegacyCleanupOptions): Promise<number> {
  if (options?.consumersStopped !== true) {
    throw new Error(
      `legacy-cleanup returns every +inf reservation of "${queue}" to the ready list; run it only while every ` +
        'consumer of that queue is stopped, and confirm it (consumersStopped: true, or --consumers-stopped)',
    );
  }
  const keys = legacyKeys(queue);
  const handled = await slotGuard(queue, SCRIPTS.legacyCleanup.run(redis, [keys.ready, keys.processing, keys.deadlines], []));
  return Number(handled);
}
