import { ConfigurationError } from '@babelqueue/core';
import type { ChannelModel } from 'amqplib';
import { queueArguments, queueType } from './queue-type.js';

/** RabbitMQ 4's delivery limit of a quorum queue that declares none (3.x has none). */
const RABBITMQ_4_DEFAULT_LIMIT = 20;

/** A quorum queue's delivery limit and where it comes from; `undefined` limit: none known. */
export interface DeliveryLimit {
  readonly limit: number | undefined;
  readonly source: string;
}

/**
 * The delivery limit of `queue` if it is a quorum queue (undefined for any
 * other type): its `x-delivery-limit` argument, read over AMQP 0-9-1 as
 * {@link queueArguments} reads it, else RabbitMQ 4's default of 20 (the
 * server's version comes with the connection). A limit set by a policy is not
 * visible over AMQP 0-9-1 (the management API shows it) and is not checked.
 */
export async function deliveryLimitOf(model: ChannelModel, queue: string): Promise<DeliveryLimit | undefined> {
  if ((await queueType(model, queue)) !== 'quorum') return undefined;
  const value = (await queueArguments(model, queue, 'quorum'))?.['x-delivery-limit'];
  if (typeof value === 'number') return { limit: value, source: 'its x-delivery-limit argument' };
  const version = String((model.connection as unknown as { serverProperties?: { version?: unknown } }).serverProperties?.version ?? '');
  const major = Number(/^(\d+)\./.exec(version)?.[1] ?? 0);
  if (major >= 4) return { limit: RABBITMQ_4_DEFAULT_LIMIT, source: `RabbitMQ ${version}'s default for a quorum queue without x-delivery-limit` };
  return { limit: undefined, source: `none (RabbitMQ ${version || '3.x'} sets no default)` };
}

/**
 * Refuses a consume of a quorum queue whose delivery limit is below the App's
 * `maxAttempts` (0 = no cap): RabbitMQ would drop or dead-letter a message
 * that keeps going back to the queue (a worker killed mid-handler) before the
 * App's own cap sends it, with its record, to the App's DLQ.
 */
export async function assertDeliveryLimit(model: ChannelModel, queue: string, maxAttempts: number | undefined): Promise<void> {
  if (maxAttempts === undefined) return;
  const found = await deliveryLimitOf(model, queue);
  if (found?.limit === undefined) return;
  const cap = maxAttempts === 0 ? Number.POSITIVE_INFINITY : maxAttempts;
  if (found.limit >= cap) return;
  throw new ConfigurationError(
    `refusing to consume "${queue}": it is a quorum queue whose delivery limit is ${found.limit} (${found.source}), below the App's maxAttempts of ` +
      `${maxAttempts === 0 ? '0 (no cap)' : maxAttempts}. RabbitMQ drops or dead-letters a message returned to the queue more often than its limit, ` +
      'before the App\'s own cap dead-letters it with its record. Raise the queue\'s x-delivery-limit (or the transport\'s deliveryLimit for a queue it ' +
      'declares) to at least maxAttempts, or lower maxAttempts.',
  );
}
