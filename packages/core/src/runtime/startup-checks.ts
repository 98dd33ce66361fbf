import type { PolicyConfig } from '../settlement/policy-config.js';
import type { AppSettings } from './app-settings.js';
import { ConfigurationError } from './errors.js';
import type { Handler } from './message.js';

/**
 * The checks and one-time warnings of a worker start: refused before anything
 * is consumed (a DLQ that is the queue itself, a handler timeout not below the
 * broker's reservation, no handlers while every message would be retried),
 * then said once per App when consuming begins (dead-lettering off, a backoff
 * the transport ignores, a transport with no retry path).
 */
export function startupChecks(settings: AppSettings, handlers: ReadonlyMap<string, Handler>, config: (queue: string) => PolicyConfig) {
  const { transport, logger } = settings;
  let warned = false;
  return {
    /** `worker`: a long-running `run()`, where no handlers under fail/release is surely a mistake; `consume()` only warns. */
    beforeConsume(queue: string, worker: boolean): void {
      config(queue);
      if (handlers.size === 0) {
        if (worker && (settings.onUnknownUrn === 'fail' || settings.onUnknownUrn === 'release')) {
          throw new ConfigurationError(`no handlers are registered: every message on "${queue}" would fail as an unknown URN; register one with app.handle(urn, handler) before run()`);
        }
        logger.warn({ queue, onUnknownUrn: settings.onUnknownUrn }, `no handlers are registered: every message takes on_unknown_urn: ${settings.onUnknownUrn}`);
      }
      const reservation = transport.reservationMs?.(queue);
      const timeout = settings.handlerTimeoutMs;
      if (timeout !== undefined && reservation !== undefined && timeout >= reservation) {
        throw new ConfigurationError(`handlerTimeoutMs (${timeout}) must be below the ${transport.rules.name} reservation of ${reservation} ms, or a message still being handled could be given to a second consumer; lower it or lengthen the reservation`);
      }
    },

    started(queue: string, concurrency: number): void {
      const dlq = config(queue).deadLetterQueue;
      logger.info({ queue, binding: transport.rules.name, concurrency, deadLetter: dlq ?? 'off' }, `consuming ${queue} on ${transport.target}`);
      if (warned) return;
      warned = true;
      if (dlq === undefined) {
        logger.warn({ queue, maxAttempts: settings.maxAttempts },
          `dead-lettering is off: a message that still fails after ${settings.maxAttempts === 0 ? 'its' : settings.maxAttempts} attempt(s) is dropped (logged at ERROR); pass deadLetter: true to keep such messages in ${config(queue).defaultDeadLetterQueue}`);
      }
      if (settings.retryBackoffSet && !transport.capabilities.delayedRetry) {
        const advice = transport.rules.delayAdvice ?? 'this binding retries at once';
        logger.warn({ queue, binding: transport.rules.name }, `retryBackoff is ignored: the ${transport.rules.name} transport cannot delay a retry (${advice})`);
      }
      if (!transport.capabilities.retry) {
        logger.warn({ queue, binding: transport.rules.name },
          `this transport has no retry path: a handler that fails leaves its message unsettled until it succeeds${transport.rules.retryPathAdvice ? `; ${transport.rules.retryPathAdvice}` : ''}`);
      }
    },
  };
}
