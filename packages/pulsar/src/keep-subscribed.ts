import { pause, reconnectDelayMs, type Logger, type ResolvedReconnectBackoff } from '@babelqueue/core';
import { errorText } from './errors.js';
import type { ConsumerOwner, LoopConsumer } from './loop-consumer.js';

/** How one kind of consumer opens, binds and drops its connection, for {@link keepSubscribed}. */
export interface Subscription<C> {
  /** Opens a connection with a subscription on it. */
  open(): Promise<C>;
  /**
   * An open failed: true to open again at once (the consumer changed how it
   * opens), false to retry after the backoff; throws to give up.
   */
  refused(error: unknown, connectedBefore: boolean): boolean;
  /** Binds a fresh connection; resolves when it closes. */
  attach(connection: C): Promise<void>;
  /** The bound connection closed. */
  detach(): void;
  /** An open that completed after the stop: closed once open, never dropped mid-way. */
  discard(connection: C): void;
}

/** Who is kept subscribed, for the logs and the backoff. */
export interface SubscriptionLog {
  readonly logger: Logger;
  readonly queue: string;
  readonly reconnect: ResolvedReconnectBackoff;
  /** What is opened, as the logs name it ("Pulsar consumer WebSocket"). */
  readonly what: string;
}

/**
 * Keeps `consumer` subscribed until `stopping` aborts: opens, tells the owner,
 * waits for the connection to drop, and opens again after a backoff, for
 * ever. Resolves at the stop, leaving an open connection for the settlements
 * still to come; rejects only when `subscription.refused` gives up.
 */
export async function keepSubscribed<C>(
  consumer: LoopConsumer,
  owner: ConsumerOwner,
  subscription: Subscription<C>,
  stopping: AbortSignal,
  log: SubscriptionLog,
): Promise<void> {
  const { logger, queue, what } = log;
  let connected = false;
  const stop = untilStopped(stopping);
  for (let failures = 0; !stopping.aborted; ) {
    let connection: C | 'stop';
    const opening = subscription.open();
    try {
      // A stop does not wait for an open that hangs (a black-holed broker).
      connection = await Promise.race([opening, stop]);
    } catch (error) {
      if (subscription.refused(error, connected)) continue;
      failures += 1;
      logger.warn({ queue, attempt: failures, error: errorText(error) }, `cannot open the ${what}; retrying`);
      await pause(reconnectDelayMs(log.reconnect, failures), stopping);
      continue;
    }
    if (connection === 'stop') {
      opening.then((late) => subscription.discard(late), () => undefined);
      return;
    }
    if (connected) logger.info({ queue }, `${what} reconnected`);
    connected = true;
    failures = 0;
    const closed = subscription.attach(connection);
    owner.opened(consumer);
    const why = await Promise.race([closed.then(() => 'lost' as const), stop]);
    if (why === 'stop') return;
    subscription.detach();
    owner.lost(consumer);
    logger.warn({ queue, inFlight: consumer.inFlight }, `${what} lost; reconnecting (unacknowledged messages are redelivered)`);
    failures += 1;
    await pause(reconnectDelayMs(log.reconnect, failures), stopping);
  }
}

/** Resolves `'stop'` once `signal` aborts: raced against a consumer's open and its connection. */
function untilStopped(signal: AbortSignal): Promise<'stop'> {
  if (signal.aborted) return Promise.resolve('stop');
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve('stop'), { once: true }));
}
