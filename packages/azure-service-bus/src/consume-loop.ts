import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { pullLoop, type ConsumeOptions, type Delivery, type Logger } from '@babelqueue/core';
import { isTransient } from './errors.js';

/** Pauses after a failed receive while the connection comes back: doubling from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

export interface ConsumeLoopDeps {
  /** Opens a PeekLock receiver on the queue (again, after the SDK closed one). */
  readonly openReceiver: () => ServiceBusReceiver;
  /** A delivery settled through the receiver that received it. */
  readonly toDelivery: (message: ServiceBusReceivedMessage, receiver: ServiceBusReceiver) => Delivery;
  readonly queue: string;
  readonly logger: Logger;
  readonly receiveWaitMs: number;
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
  let retryMs = RETRY_FIRST_MS;
  const fetch = async (max: number, waitMs: number, signal: AbortSignal): Promise<Delivery[]> => {
    if (signal.aborted) return [];
    const want = backlog ? max : 1;
    let messages: ServiceBusReceivedMessage[];
    try {
      messages = await receiver.receiveMessages(want, { maxWaitTimeInMs: Math.max(1, waitMs), abortSignal: signal });
    } catch (error) {
      if (signal.aborted) return [];
      if (!isTransient(error)) throw error;
      deps.logger.warn({ queue: deps.queue, error: describe(error), retryInMs: retryMs }, 'Service Bus receive failed; the SDK reconnects and the loop receives again');
      await sleep(retryMs, undefined, { signal }).catch(() => undefined);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      if (receiver.isClosed && !signal.aborted) {
        receiver = deps.openReceiver();
        receivers.add(receiver);
      }
      return [];
    }
    retryMs = RETRY_FIRST_MS;
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

/** An error's name, code and message: never a message body. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${error.name}${typeof code === 'string' ? ` (${code})` : ''}: ${error.message}`;
}
