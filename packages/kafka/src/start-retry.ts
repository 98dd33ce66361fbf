import { pause, reconnectDelayMs, type Logger, type ResolvedReconnectBackoff } from '@babelqueue/core';

/** Attempts of a start-up step before its error ends the consume start. */
const START_ATTEMPTS = 5;
/** The pause after failed attempt n: 200 ms doubling, uncapped (at most 1.6 s within the attempts). */
const START_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 200, maxDelayMs: Infinity, multiplier: 2 });

/**
 * Runs a start-up step (the topic look-up and creation before a consumer
 * subscribes) again when it fails, a few times with a growing pause: a
 * connection cut during the look-up surfaces from kafkajs in odd shapes (a
 * metadata response of null becomes a TypeError in its admin client), and a
 * worker must not die on one. The last error is thrown as it came; an abort
 * stops the retries.
 */
export async function retryStart<T>(step: () => Promise<T>, signal: AbortSignal, logger: Logger, what: string): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= START_ATTEMPTS || signal.aborted) throw error;
      logger.warn({ what, attempt, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }, 'Kafka start-up step failed; trying again');
      // No signal, as before: an abort does not cut this pause short; the next failure ends the retries.
      await pause(reconnectDelayMs(START_BACKOFF, attempt));
    }
  }
}
