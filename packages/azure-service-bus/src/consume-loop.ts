import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import {
  pause,
  reconnectDelayMs,
  type ConsumeOptions,
  type Logger,
  type ResolvedReconnectBackoff,
} from '@babelqueue/core';
import { pullLoop, type Delivery } from '@babelqueue/core/binding';
import { describeError, isTransient } from './errors.js';

/** Pauses after consecutive failed receives while the connection comes back: 100 ms doubling, at most 5 s. */
const RECEIVE_RETRY_BACKOFF: ResolvedReconnectBackoff = Object.freeze({ initialDelayMs: 100, maxDelayMs: 5_000, multiplier: 2 });

export interface ConsumeLoopDeps {
  /** Opens a PeekLock receiver on the queue (again, after the SDK closed one). */
  readonly openReceiver: () => ServiceBusReceiver;
  /** A delivery settled through the receiver that received it. */
  readonly toDelivery: (message: ServiceBusReceivedMessage, receiver: ServiceBusReceiver) => Delivery;
  readonly queue: string;
  readonly logger: Logger;
  readonly receiveWaitMs: number;
  /** Told whether each receive reached the namespace (the transport's `connected`). */
  readonly reached?: (ok: boolean) => void;
}

/**
 * PeekLock consumption through the SDK's batching receiver under the core's
 * pull loop (at most `concurrency` locked at once, drain limits honoured).
 *
 * `receiveMessages(n)` returns at once when n messages are there, but waits up
 * to a second after the first one when fewer are. So the loop asks for one
 * message while the queue runs dry and for every free slot once a batch came
 * back full: no added latency when idle, full batches under load.
 *
 * A receive that fails for a transient reason (a cut connection, a timeout)
 * is logged at WARN and tried again after a pause: the SDK reopens its
 * connection and link on the next call, and a receiver it closed is replaced.
 * Messages locked at the cut come back when their locks lapse. Refused
 * credentials or a missing entity end the loop with the SDK's error.
 */
export async function consumeLoop(deps: ConsumeLoopDeps, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions): Promise<void> {
  const receivers = new Set<ServiceBusReceiver>();
  let receiver = deps.openReceiver();
  receivers.add(receiver);
  let backlog = false;
  let failures = 0;
  const fetch = async (max: number, waitMs: number, signal: AbortSignal): Promise<Delivery[]> => {
    if (signal.aborted) return [];
    const want = backlog ? max : 1;
    let messages: ServiceBusReceivedMessage[];
    try {
      messages = await receiver.receiveMessages(want, { maxWaitTimeInMs: Math.max(1, waitMs), abortSignal: signal });
    } catch (error) {
      if (signal.aborted) return [];
      if (!isTransient(error)) throw error;
      deps.reached?.(false);
      failures += 1;
      const retryMs = reconnectDelayMs(RECEIVE_RETRY_BACKOFF, failures);
      deps.logger.warn({ queue: deps.queue, error: describeError(error), retryInMs: retryMs }, 'Service Bus receive failed; the SDK reconnects and the loop receives again');
      await pause(retryMs, signal);
      if (receiver.isClosed && !signal.aborted) {
        receiver = deps.openReceiver();
        receivers.add(receiver);
      }
      return [];
    }
    failures = 0;
    deps.reached?.(true);
    backlog = messages.length === want && want > 0;
    const from = receiver;
    return messages.map((message) => deps.toDelivery(message, from));
  };
  try {
    await pullLoop(fetch, onDelivery, options, deps.receiveWaitMs);
  } finally {
    await Promise.all([...receivers].map((r) => r.close().catch(() => undefined)));
  }
}
