import type { Envelope } from '../envelope/types.js';
import type { Delivery, HeaderValue } from '../transport/transport.js';
import type { Message } from './message.js';

/**
 * The {@link Message} a handler receives. Its `signal` is made on first read:
 * most handlers never look at it, and an AbortController per delivery costs
 * more than the rest of the message. Aborting before anyone read it keeps the
 * reason, so a later read gets a signal already aborted with that reason.
 * Its `headers` are the delivery's, read when first asked for: a binding may
 * decode them only then (most handlers never read them).
 */
export class DeliveredMessage implements Message {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  readonly #delivery: Pick<Delivery, 'headers'>;

  constructor(
    readonly urn: string,
    readonly traceId: string,
    readonly id: string,
    readonly queue: string,
    readonly attempts: number,
    delivery: Pick<Delivery, 'headers'>,
    readonly envelope: Envelope,
    readonly data: Record<string, unknown>,
    readonly body: Buffer,
  ) {
    this.#delivery = delivery;
  }

  get headers(): Readonly<Record<string, HeaderValue>> {
    return this.#delivery.headers;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts `signal` with `reason` (the first reason wins, as with an AbortController). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
