/**
 * Compile-time checks, run by `npm run typecheck` (this package's tsconfig):
 * `@OnJob` and `BabelQueueClient` take the registered catalog's URNs and
 * payload types. Each @ts-expect-error fails the typecheck if the line compiles.
 */
import type { Message } from '@babelqueue/core';
import { BabelQueueClient, OnJob } from '@babelqueue/nestjs';
import type { OrderCreated, PaymentTaken } from './catalog.js';

export class Handlers {
  @OnJob('urn:babel:orders:created')
  created(data: OrderCreated, message: Message<OrderCreated>): number {
    return data.order_id + message.attempts;
  }

  @OnJob('urn:babel:payments:taken', { name: 'payments' })
  taken(data: PaymentTaken): string {
    return data.payment_id;
  }

  // @ts-expect-error a URN the catalog does not have
  @OnJob('urn:babel:orders:shipped')
  shipped(data: OrderCreated): number {
    return data.order_id;
  }

  // @ts-expect-error the payload of another URN
  @OnJob('urn:babel:orders:created')
  wrong(data: PaymentTaken): string {
    return data.payment_id;
  }
}

export async function publishing(client: BabelQueueClient): Promise<void> {
  await client.publish('urn:babel:orders:created', { order_id: 1042 });
  // @ts-expect-error order_id is a number in the catalog
  await client.publish('urn:babel:orders:created', { order_id: '1042' });
  // @ts-expect-error a URN the catalog does not have
  await client.publish('urn:babel:orders:shipped', { order_id: 1042 });
}
