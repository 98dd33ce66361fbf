// Compile-only fixture (never run): the typed App API as a user writes it.
// `catalog.test.ts` type-checks it against the built declaration files; every
// `@ts-expect-error` line must be an error, or tsc fails on the unused directive.
import { createApp, InMemoryTransport, type Message } from '@babelqueue/core';

/** Interfaces have no index signature: before, `publish` refused them (TS2345). */
interface OrderCreated {
  order_id: number;
  note?: string;
}
interface OrderShipped {
  order_id: number;
  carrier: string;
}
type Orders = {
  'urn:babel:orders:created': OrderCreated;
  'urn:babel:orders:shipped': OrderShipped;
};

// Without a catalog: any URN, any object payload, `handle<T>()` names the type.
const plain = createApp({ transport: new InMemoryTransport() });
const created: OrderCreated = { order_id: 1 };
void plain.publish('urn:babel:orders:created', created);
plain.handle<OrderCreated>('urn:babel:orders:created', (data, message: Message<OrderCreated>) => {
  const id: number = data.order_id;
  const signal: AbortSignal = message.signal;
  void id;
  void signal;
});
plain.handle('urn:babel:orders:any', (data) => {
  const value: unknown = data.anything;
  void value;
});
// @ts-expect-error a payload is an object, not a number
void plain.publish('urn:babel:orders:created', 42);

// With a catalog: only its URNs, and each payload checked.
const typed = createApp<Orders>({ transport: new InMemoryTransport(), queue: 'orders' });
typed
  .handle('urn:babel:orders:created', (data) => {
    const id: number = data.order_id;
    void id;
  })
  .handle('urn:babel:orders:shipped', async (data, message) => {
    const carrier: string = data.carrier;
    const same: string = message.data.carrier;
    void carrier;
    void same;
  });
void typed.publish('urn:babel:orders:shipped', { order_id: 1, carrier: 'dhl' }, { delayMs: 10 });
// @ts-expect-error `carrier` is missing
void typed.publish('urn:babel:orders:shipped', { order_id: 1 });
// @ts-expect-error a URN outside the catalog
void typed.publish('urn:babel:orders:deleted', { order_id: 1 });
// @ts-expect-error the handler of orders:created receives OrderCreated, not OrderShipped
typed.handle('urn:babel:orders:created', (data: OrderShipped) => data.carrier);

// publishMany takes the same catalog: an array of the URN's payloads.
void typed.publishMany('urn:babel:orders:shipped', [{ order_id: 1, carrier: 'dhl' }, { order_id: 2, carrier: 'ups' }], { queue: 'orders' });
// @ts-expect-error one item lacks `carrier`
void typed.publishMany('urn:babel:orders:shipped', [{ order_id: 1, carrier: 'dhl' }, { order_id: 2 }]);
// @ts-expect-error a URN outside the catalog
void typed.publishMany('urn:babel:orders:deleted', [{ order_id: 1 }]);
const ids: Promise<string[]> = plain.publishMany('urn:babel:orders:created', [created, { order_id: 2 }]);
void ids;
// @ts-expect-error items are objects
void plain.publishMany('urn:babel:orders:created', [1, 2]);
