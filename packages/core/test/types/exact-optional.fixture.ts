// Compile-only fixture (never run), checked with `exactOptionalPropertyTypes`:
// options take `undefined` where a setting is optional (a value read from the
// environment is `number | undefined`), and `onFailed` sees the catalog's types.
import { createApp, InMemoryTransport } from '@babelqueue/core';

declare const fromEnv: number | undefined;
declare const maybeSignal: AbortSignal | undefined;
declare const maybeQueue: string | undefined;

interface OrderCreated {
  order_id: number;
}
interface OrderShipped {
  order_id: number;
  carrier: string;
}
type Orders = {
  'urn:babel:orders:created': OrderCreated;
  'urn:babel:orders:shipped': OrderShipped;
};

const app = createApp<Orders>({
  transport: new InMemoryTransport(),
  queue: maybeQueue,
  maxAttempts: fromEnv,
  handlerTimeoutMs: fromEnv,
  shutdownTimeoutMs: undefined,
  deadLetter: { queue: maybeQueue },
  logger: undefined,
  onFailed: ({ message }) => {
    const order: number = message.data.order_id; // both payloads have order_id
    // @ts-expect-error `carrier` is only on OrderShipped: data is the catalog's union, not any
    const carrier: string = message.data.carrier;
    void order;
    void carrier;
  },
});
void app.publish('urn:babel:orders:created', { order_id: 1 }, { delayMs: fromEnv, traceId: undefined, queue: maybeQueue });
void app.run({ concurrency: fromEnv, signal: maybeSignal, handleSignals: undefined });
void app.consume({ maxMessages: fromEnv, idleMs: fromEnv, signal: maybeSignal });

// Without a catalog, onFailed's data is any object.
createApp({
  transport: new InMemoryTransport(),
  onFailed: ({ message }) => {
    const value: unknown = message.data.anything;
    void value;
  },
});
