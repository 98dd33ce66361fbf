import type { Logger } from '@babelqueue/core';

/** Attempts of a start-up step before its error ends the consume start. */
const START_ATTEMPTS = 5;

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
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** (attempt - 1)));
    }
  }
}
