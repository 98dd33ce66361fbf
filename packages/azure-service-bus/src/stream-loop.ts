import type { ProcessErrorArgs, ServiceBusReceivedMessage } from '@azure/service-bus';
import { pause, reconnectDelayMs, type ConsumeOptions, type ResolvedReconnectBackoff } from '@babelqueue/core';
import type { Delivery } from '@babelqueue/core/binding';
import type { ConsumeLoopDeps } from './consume-loop.js';
import { describeError, isTransient } from './errors.js';

/** Pauses between the probes that tell when the namespace is back after a failed receive: 100 ms doubling, at most 5 s. */
const PROBE_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 100, maxDelayMs: 5_000, multiplier: 2 });

/**
 * PeekLock consumption through the SDK's streaming receiver (`subscribe`), for
 * a consume call without drain limits (`run`, a worker).
 *
 * The SDK keeps `concurrency` credits on the link and gives one back only when
 * a handler returned, and each handler here returns once the runtime settled
 * its delivery: at most `concurrency` messages are locked at once, and a
 * message is handed over the moment it arrives (the batching receiver waits up
 * to a second after the first message for a batch to fill). Settlement is the
 * same as the pull loop's: through the receiver that received it, never by the
 * SDK (`autoCompleteMessages` off; the handler never throws, so the SDK never
 * abandons on its own).
 *
 * The SDK reattaches a lost link by itself; a receive error is logged at WARN,
 * and the namespace counts as reached again once a peek answers. Refused
 * credentials or a missing entity end the loop with the SDK's error. On stop
 * the subscription ends (no new credit) and the deliveries in flight settle
 * before the receiver closes.
 */
export async function streamLoop(deps: ConsumeLoopDeps, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
  const { queue, logger, reached } = deps;
  const { signal } = options;
  const receiver = deps.openReceiver();
  const inFlight = new Set<Promise<void>>();
  let fatal: unknown;
  let probing = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const onAbort = () => finish();
  signal.addEventListener('abort', onAbort, { once: true });

  const processMessage = async (message: ServiceBusReceivedMessage): Promise<void> => {
    reached?.(true);
    const job = onDelivery(deps.toDelivery(message, receiver)).catch((error: unknown) => {
      // The runtime owns a delivery's errors (it leaves the message for redelivery); this only keeps the loop alive.
      logger.error({ queue, error: describeError(error) }, 'delivery handler threw');
    });
    inFlight.add(job);
    try {
      await job;
    } finally {
      inFlight.delete(job);
    }
  };

  /** Peeks until the namespace answers, then counts it reached. One probe at a time. */
  const probe = async (): Promise<void> => {
    if (probing) return;
    probing = true;
    try {
      for (let attempt = 1; !signal.aborted && fatal === undefined; attempt++) {
        await pause(reconnectDelayMs(PROBE_BACKOFF, attempt), signal);
        try {
          await receiver.peekMessages(1, { abortSignal: signal });
          reached?.(true);
          return;
        } catch {
          // Still unreachable: the next probe waits longer.
        }
      }
    } finally {
      probing = false;
    }
  };

  const processError = async ({ error, errorSource }: ProcessErrorArgs): Promise<void> => {
    if (signal.aborted) return;
    if (errorSource === 'receive' && !isTransient(error)) {
      fatal ??= error;
      finish();
      return;
    }
    logger.warn({ queue, source: errorSource, error: describeError(error) }, 'Service Bus receive failed; the SDK reattaches the link and the loop goes on');
    if (errorSource === 'receive') {
      reached?.(false);
      void probe();
    }
  };

  const subscription = receiver.subscribe({ processMessage, processError }, { autoCompleteMessages: false, maxConcurrentCalls: Math.max(1, Math.floor(options.concurrency)) });
  try {
    if (!signal.aborted) await finished;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await subscription.close().catch(() => undefined);
    await Promise.allSettled(inFlight);
    await receiver.close().catch(() => undefined);
  }
  if (fatal !== undefined) throw fatal;
}
