import type { Envelope } from '../envelope/types.js';
import type { HeaderValue } from '../transport/transport.js';

/** What a handler receives beside the envelope's `data`. */
export interface Message<TData = Record<string, unknown>> {
  /** The routed URN (`job`, or the inbound `urn` alias). */
  readonly urn: string;
  readonly traceId: string;
  /** `meta.id`: the per-message identity (dedupe on it). */
  readonly id: string;
  /** The queue the message was consumed from. */
  readonly queue: string;
  /** The counted attempt: 1 on the first delivery. */
  readonly attempts: number;
  /** Native metadata as received (riders such as traceparent). */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** The decoded envelope. */
  readonly envelope: Envelope;
  readonly data: TData;
  /** The body bytes exactly as delivered. */
  readonly body: Buffer;
  /**
   * Aborts when the handler timeout passes (the delivery then takes the retry
   * path) or when the worker's shutdown deadline passes (the delivery is then
   * left for redelivery). Pass it to `fetch`, database drivers and timers so
   * they stop too; a handler that ignores it keeps running, but its result no
   * longer settles the message.
   */
  readonly signal: AbortSignal;
}

/** A function that handles one URN. Returning acknowledges; throwing takes the retry / dead-letter path. */
export type Handler<TData = Record<string, unknown>> = (data: TData, message: Message<TData>) => unknown;

/**
 * A compile-time map from URN to the payload type of its `data`, for
 * `createApp<Catalog>()`: `handle` and `publish` then check each payload.
 *
 * @example
 * ```ts
 * interface OrderCreated { order_id: number }
 * type Orders = { 'urn:babel:orders:created': OrderCreated };
 * const app = createApp<Orders>({ transport });
 * app.handle('urn:babel:orders:created', (data) => data.order_id); // data: OrderCreated
 * ```
 */
export type UrnCatalog = object;
