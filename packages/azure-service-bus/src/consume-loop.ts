import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { pullLoop, type ConsumeOptions, type Delivery } from '@babelqueue/core';

/**
 * PeekLock consumption through the SDK's batching receiver under the core's
 * pull loop (at most `concurrency` locked at once, drain limits honoured).
 *
 * `receiveMessages(n)` returns at once when n messages are there, but waits up
 * to a second after the first one when fewer are. So the loop asks for one
 * message while the queue runs dry and for every free slot once a batch came
 * back full: no added latency when idle, full batches under load.
 */
export async function consumeLoop(
  receiver: ServiceBusReceiver,
  toDelivery: (message: ServiceBusReceivedMessage) => Delivery,
  onDelivery: (delivery: Delivery) => Promise<void>,
  options: ConsumeOptions,
  receiveWaitMs: number,
): Promise<void> {
  let backlog = false;
  const fetch = async (max: number, waitMs: number, signal: AbortSignal): Promise<Delivery[]> => {
    if (signal.aborted) return [];
    const want = backlog ? max : 1;
    let messages: ServiceBusReceivedMessage[];
    try {
      messages = await receiver.receiveMessages(want, { maxWaitTimeInMs: Math.max(1, waitMs), abortSignal: signal });
    } catch (error) {
      if (signal.aborted) return [];
      throw error;
    }
    backlog = messages.length === want && want > 0;
    return messages.map(toDelivery);
  };
  await pullLoop(fetch, onDelivery, options, receiveWaitMs);
}
