import type { ServiceBusMessage } from '@azure/service-bus';
import type { OutgoingMessage, PublishOutcome } from '@babelqueue/core';
import { failedOutcomes, indexesByQueue, type EnvelopeProjection } from '@babelqueue/core/binding';
import type { Connection } from './connection.js';
import type { ResolvedOptions } from './options.js';
import { toServiceBusMessage, type Placement } from './projection.js';

/**
 * Sending: one message, a raw record, or a batch packed with
 * `createMessageBatch`, each placed in its session and partition (options
 * `sessionId` and `partitionKey`), through the connection's sender of the queue.
 */
export class Publisher {
  constructor(
    private readonly connection: Connection,
    private readonly options: Pick<ResolvedOptions, 'sessionId' | 'partitionKey'>,
  ) {}

  /** Sends one message to `queue`; resolves once the service has it. */
  async send(queue: string, message: ServiceBusMessage): Promise<void> {
    const sender = await this.connection.sender(queue);
    await sender.sendMessages(message);
  }

  /** The Service Bus message of a published envelope: projection, riders, delay, placement. */
  outgoing(message: OutgoingMessage): ServiceBusMessage {
    const out: Parameters<typeof toServiceBusMessage>[2] = { placement: this.placement(message.queue, message.body, message.projection) };
    if (message.headers !== undefined) out.riders = message.headers;
    if (message.delayMs !== undefined) out.delayMs = message.delayMs;
    return toServiceBusMessage(message.body, message.projection, out);
  }

  /** The Service Bus message of a raw record (a DLQ record, a redrive): the body as is, `headers` as riders. */
  raw(queue: string, body: Buffer, headers: Readonly<Record<string, string>>): ServiceBusMessage {
    return toServiceBusMessage(body, undefined, { riders: headers, placement: this.placement(queue, body, undefined) });
  }

  /**
   * Per queue, in order, as few batches as the namespace's size limit allows;
   * one outcome per message, in order (see `AzureServiceBusTransport.publishMany`).
   */
  async sendMany(messages: readonly OutgoingMessage[]): Promise<PublishOutcome[]> {
    const outcomes: PublishOutcome[] = new Array(messages.length);
    await Promise.all([...indexesByQueue(messages)].map(async ([queue, indexes]) => {
      const settle = (batch: readonly number[], error?: unknown) => {
        const group = batch.map((i) => messages[i]!);
        const results = error === undefined ? group.map((m): PublishOutcome => ({ ok: true, messageId: m.projection.messageId })) : failedOutcomes(group, error);
        batch.forEach((index, k) => {
          outcomes[index] = results[k]!;
        });
      };
      try {
        const sender = await this.connection.sender(queue);
        let batch = await sender.createMessageBatch();
        let carried: number[] = [];
        const flush = async () => {
          const sent = carried;
          carried = [];
          await sender.sendMessages(batch).then(() => settle(sent), (error: unknown) => settle(sent, error));
        };
        for (const index of indexes) {
          const message = messages[index]!;
          const outgoing = this.outgoing(message);
          if (batch.tryAddMessage(outgoing)) {
            carried.push(index);
            continue;
          }
          if (carried.length > 0) {
            await flush();
            batch = await sender.createMessageBatch();
            if (batch.tryAddMessage(outgoing)) {
              carried.push(index);
              continue;
            }
          }
          settle([index], new RangeError(`a message of ${message.body.length} bytes does not fit a batch of ${batch.maxSizeInBytes} bytes (queue "${queue}")`));
        }
        if (carried.length > 0) await flush();
      } catch (error) {
        settle(indexes.filter((index) => outcomes[index] === undefined), error);
      }
    }));
    return outcomes;
  }


  /** The session (option `sessionId`, a string or a function of the message) and partition key of a message sent to `queue`. */
  private placement(queue: string, body: Buffer, projection: EnvelopeProjection | undefined): Placement {
    return { sessionId: this.options.sessionId({ queue, body, projection }), partitionKey: this.options.partitionKey };
  }
}
