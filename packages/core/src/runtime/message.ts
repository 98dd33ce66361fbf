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
}

/** A function that handles one URN. Returning acknowledges; throwing takes the retry / dead-letter path. */
export type Handler<TData = Record<string, unknown>> = (data: TData, message: Message<TData>) => unknown;
